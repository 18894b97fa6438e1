package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/workspace"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// forbidsDeletes fails any plan that deletes a resource: a destroy plan of
// the hello config deletes terraform_data.greeting and terraform_data.secret.
const forbidsDeletes = `!object.?resource_changes.orValue([]).exists(rc, 'delete' in rc.change.actions)`

// destroyRunJobs are a Workspace's Jobs of phase that plan or apply a destroy.
func destroyRunJobs(t *testing.T, ns, name, phase string) []batchv1.Job {
	t.Helper()
	var jobs batchv1.JobList
	require.NoError(t, env.Client.List(context.Background(), &jobs, client.InNamespace(ns),
		client.MatchingLabels{magosv1.WorkspaceLabel: name, magosv1.PhaseLabel: phase}))
	var out []batchv1.Job
	for _, j := range jobs.Items {
		if j.Annotations[magosv1.PlanModeAnnotation] == string(magosv1.PlanModeDestroy) {
			out = append(out, j)
		}
	}
	return out
}

// destroying is a wait condition: the Workspace is being deleted and its
// destroy plan reached phase.
func destroying(phase magosv1.WorkspacePhase) func(*magosv1.Workspace) bool {
	return func(ws *magosv1.Workspace) bool {
		return ws.DeletionTimestamp != nil && ws.Status.Plan != nil && ws.Status.Plan.Mode == magosv1.PlanModeDestroy &&
			ws.Status.Phase == phase && ws.Status.ObservedGeneration == ws.Generation
	}
}

// waitGone waits until Workspace ws is deleted.
func (s *stack) waitGone(ws *magosv1.Workspace, timeout time.Duration, what string) {
	s.t.Helper()
	require.Eventually(s.t, func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(ws), &magosv1.Workspace{}))
	}, timeout, 250*time.Millisecond, what)
}

// approveAndApply approves the plan a Manual Workspace waits with and
// waits until revision rev is applied; it returns the plan's ID.
func approveAndApply(t *testing.T, s *stack, name, rev string) string {
	t.Helper()
	planID := s.waitWorkspace(name, 3*time.Minute, "waits for approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	}).Status.Plan.ID
	approve(t, s.ns, name, planID)
	s.waitWorkspace(name, 3*time.Minute, "applies", appliedRevision(rev))
	return planID
}

// requireEvent waits for an event of reason on Workspace name.
func requireEvent(t *testing.T, ns, name, reason string) {
	t.Helper()
	require.Eventually(t, func() bool { return hasEvent(t, ns, name, reason) }, 10*time.Second, 250*time.Millisecond, "event %s", reason)
}

// TestWorkspaceDestroyGate: deleting a destroyOnDelete Workspace plans the
// destroy and puts that plan through the policy gate and approval before
// anything is destroyed; only an allowed opt-out destroys without them.
func TestWorkspaceDestroyGate(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStackWith(t, stackOptions{Workspace: func(o *config.Options) { o.Guards.AllowDestroySkipGate = true }})
	rev := s.gitRepository("infra", copyConfig(t, "hello"))

	t.Run("a policy that refuses deletes keeps the Workspace and its resources", func(t *testing.T) {
		label := rand.String(8)
		validatingPolicy(t, "v1", label, "Deny", forbidsDeletes, "deleting resources is not allowed here")
		ws := s.newWorkspace("protected", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.DestroyOnDelete = true
			selecting(label)(ws)
		})
		s.waitWorkspace("protected", 3*time.Minute, "applies (creating passes the policy)", appliedRevision(rev))
		require.Equal(t, 2, stateResources(t, s.ns, "protected"))

		require.NoError(t, env.Client.Delete(ctx, ws))
		got := s.waitWorkspace("protected", 3*time.Minute, "is blocked by policy while being deleted", destroying(magosv1.PhaseFailed))
		plan := got.Status.Plan
		assert.Equal(t, int32(2), plan.Destroy, "the destroy plan removes both resources")
		require.NotNil(t, plan.Policy)
		assert.False(t, plan.Policy.Passed)
		require.Len(t, plan.Policy.Violations, 1)
		assert.Equal(t, "deleting resources is not allowed here", plan.Policy.Violations[0].Message)
		assert.Equal(t, magosv1.ReasonPolicyViolation, conditions.Get(got, magosv1.PolicyPassedCondition).Reason)
		assert.True(t, conditions.IsTrue(got, magosv1.StalledCondition))
		assert.Equal(t, magosv1.ReasonPolicyViolation, conditions.Get(got, magosv1.ReadyCondition).Reason)
		assert.Contains(t, readyMessage(got), "being deleted")
		assert.Contains(t, readyMessage(got), "deleting resources is not allowed here")
		assert.Contains(t, got.Finalizers, workspace.DestroyFinalizer)
		requireEvent(t, s.ns, "protected", magosv1.ReasonDestroyPlanned)
		requireEvent(t, s.ns, "protected", magosv1.ReasonPolicyViolation)

		approve(t, s.ns, "protected", plan.ID)
		require.Never(t, func() bool {
			return len(destroyRunJobs(t, s.ns, "protected", magosv1.RunApply)) > 0 || countJobs(t, s.ns, "protected", magosv1.RunDestroy) > 0
		}, 4*time.Second, 250*time.Millisecond, "a denied destroy never runs, even when approvedPlan names it")
		assert.Equal(t, 2, stateResources(t, s.ns, "protected"), "nothing was destroyed")

		// The way out: let the Workspace go and leave the resources.
		got = &magosv1.Workspace{}
		require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(ws), got))
		patch := client.MergeFrom(got.DeepCopy())
		got.Spec.DestroyOnDelete = false
		require.NoError(t, env.Client.Patch(ctx, got, patch))
		s.waitGone(ws, time.Minute, "unsetting destroyOnDelete lets the Workspace go")
		assert.Equal(t, 2, stateResources(t, s.ns, "protected"), "the resources are left in place")
	})

	t.Run("manual approval: the destroy waits for its own plan to be approved", func(t *testing.T) {
		ws := s.newWorkspace("approved", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.DestroyOnDelete = true
			ws.Spec.Approval = magosv1.ApprovalManual
		})
		planID := approveAndApply(t, s, "approved", rev)

		require.NoError(t, env.Client.Delete(ctx, ws))
		got := s.waitWorkspace("approved", 3*time.Minute, "waits for approval of the destroy", destroying(magosv1.PhaseAwaitingApproval))
		destroyID := got.Status.Plan.ID
		require.NotEqual(t, planID, destroyID, "the earlier approval does not approve the destroy")
		assert.Equal(t, magosv1.ReasonDestroyAwaitingApproval, conditions.Get(got, magosv1.ReadyCondition).Reason)
		assert.Contains(t, readyMessage(got), `set spec.approvedPlan to "`+destroyID+`"`)
		assert.Contains(t, readyMessage(got), "being deleted")
		assert.False(t, conditions.IsTrue(got, magosv1.StalledCondition))
		assert.False(t, conditions.IsTrue(got, magosv1.ReconcilingCondition))
		assert.Equal(t, magosv1.ReasonDestroyPlanned, conditions.Get(got, magosv1.PlannedCondition).Reason)
		requireEvent(t, s.ns, "approved", magosv1.ReasonDestroyAwaitingApproval)
		require.Never(t, func() bool { return len(destroyRunJobs(t, s.ns, "approved", magosv1.RunApply)) > 0 }, 3*time.Second, 250*time.Millisecond,
			"nothing is destroyed before approval")
		assert.Equal(t, 2, stateResources(t, s.ns, "approved"))

		approve(t, s.ns, "approved", destroyID)
		s.waitGone(ws, 3*time.Minute, "the Workspace goes once its destroy plan is applied")
		assert.Equal(t, 0, stateResources(t, s.ns, "approved"), "the destroy emptied the state")
		applies := destroyRunJobs(t, s.ns, "approved", magosv1.RunApply)
		require.Len(t, applies, 1)
		assert.Equal(t, destroyID, applies[0].Annotations[magosv1.PlanIDAnnotation], "the apply applied exactly the approved destroy plan")
		assert.Zero(t, countJobs(t, s.ns, "approved", magosv1.RunDestroy), "no destroy without a plan ran")
		requireEvent(t, s.ns, "approved", magosv1.ReasonDestroyed)
	})

	t.Run("the opt-out destroys without the gate where the cluster allows it", func(t *testing.T) {
		label := rand.String(8)
		validatingPolicy(t, "v1", label, "Deny", forbidsDeletes, "deleting resources is not allowed here")
		ws := s.newWorkspace("teardown", "infra", func(ws *magosv1.Workspace) {
			ws.Spec.DestroyOnDelete = true
			ws.Spec.Destroy = &magosv1.DestroySpec{Gate: magosv1.DestroyGateSkip}
			ws.Spec.Approval = magosv1.ApprovalManual
			selecting(label)(ws)
		})
		approveAndApply(t, s, "teardown", rev)

		require.NoError(t, env.Client.Delete(ctx, ws))
		s.waitGone(ws, 3*time.Minute, "the Workspace goes after a destroy with neither policy nor approval")
		assert.Equal(t, 0, stateResources(t, s.ns, "teardown"), "the destroy emptied the state")
		assert.Equal(t, 1, countJobs(t, s.ns, "teardown", magosv1.RunDestroy), "one destroy Job ran")
		assert.Empty(t, destroyRunJobs(t, s.ns, "teardown", magosv1.RunPlan), "no destroy plan was made")
	})
}

// TestWorkspaceDestroySkipGateNeedsTheCluster: a Workspace cannot skip the
// destroy gate on its own: where the cluster does not allow it, its
// destroy is planned and checked by policy like any other.
func TestWorkspaceDestroySkipGateNeedsTheCluster(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	label := rand.String(8)
	validatingPolicy(t, "v1", label, "Deny", forbidsDeletes, "deleting resources is not allowed here")
	ws := s.newWorkspace("sneaky", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.DestroyOnDelete = true
		ws.Spec.Destroy = &magosv1.DestroySpec{Gate: magosv1.DestroyGateSkip}
		selecting(label)(ws)
	})
	s.waitWorkspace("sneaky", 3*time.Minute, "applies", appliedRevision(rev))

	require.NoError(t, env.Client.Delete(ctx, ws))
	got := s.waitWorkspace("sneaky", 3*time.Minute, "is blocked by policy while being deleted", destroying(magosv1.PhaseFailed))
	assert.Equal(t, magosv1.ReasonPolicyViolation, conditions.Get(got, magosv1.ReadyCondition).Reason)
	requireEvent(t, s.ns, "sneaky", magosv1.ReasonDestroyGateEnforced)
	require.Never(t, func() bool { return countJobs(t, s.ns, "sneaky", magosv1.RunDestroy) > 0 }, 3*time.Second, 250*time.Millisecond,
		"skipping the gate is not honoured")
	assert.Equal(t, 2, stateResources(t, s.ns, "sneaky"), "nothing was destroyed")

	patch := client.MergeFrom(got.DeepCopy())
	got.Spec.DestroyOnDelete = false
	require.NoError(t, env.Client.Patch(ctx, got, patch))
	s.waitGone(ws, time.Minute, "unsetting destroyOnDelete lets the Workspace go")
}

// TestPlanOnlyWorkspaceIsNotDestroyedOnDelete: a PlanOnly Workspace never
// changes resources, and deleting it does not destroy them either, even
// with destroyOnDelete: who may only plan may not destroy by deleting.
func TestPlanOnlyWorkspaceIsNotDestroyedOnDelete(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	ws := s.newWorkspace("observer", "infra", func(ws *magosv1.Workspace) { ws.Spec.DestroyOnDelete = true })
	s.waitWorkspace("observer", 3*time.Minute, "applies", appliedRevision(rev))

	got := &magosv1.Workspace{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(ws), got))
	patch := client.MergeFrom(got.DeepCopy())
	got.Spec.Mode = magosv1.ModePlanOnly
	require.NoError(t, env.Client.Patch(ctx, got, patch))
	s.waitWorkspace("observer", time.Minute, "is PlanOnly", func(w *magosv1.Workspace) bool { return w.Status.ObservedGeneration == w.Generation })

	require.NoError(t, env.Client.Delete(ctx, got))
	s.waitGone(ws, time.Minute, "a PlanOnly Workspace goes without a destroy")
	requireEvent(t, s.ns, "observer", magosv1.ReasonDestroySkipped)
	assert.Empty(t, destroyRunJobs(t, s.ns, "observer", magosv1.RunPlan), "no destroy was planned")
	assert.Zero(t, countJobs(t, s.ns, "observer", magosv1.RunDestroy))
	assert.Equal(t, 2, stateResources(t, s.ns, "observer"), "the resources and their state are left in place")
}
