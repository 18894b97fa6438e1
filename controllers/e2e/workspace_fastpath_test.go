package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// runsOf lists the phases of Workspace name's Jobs of revision rev.
func runsOf(t *testing.T, ns, name, rev string) []string {
	t.Helper()
	var jobs batchv1.JobList
	require.NoError(t, env.Client.List(context.Background(), &jobs, client.InNamespace(ns), client.MatchingLabels{magosv1.WorkspaceLabel: name}))
	var phases []string
	for _, j := range jobs.Items {
		if j.Annotations[magosv1.RevisionAnnotation] == rev {
			phases = append(phases, j.Labels[magosv1.PhaseLabel])
		}
	}
	return phases
}

// TestFastPath: where nothing decides on the plan (approval Auto, no
// policy, no Rollout gate, not a destroy) a revision is planned and
// applied in one Job with the apply identity, without the apply-time
// proof, and recorded as applied without a gate; the plan is still shown.
// A policy, Manual approval, a Rollout gate or a destroy each send the
// next run through separate plan and apply Jobs with the proof.
func TestFastPath(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	dir := copyConfig(t, "hello")
	rev := s.gitRepository("infra", dir)

	s.newWorkspace("fast", "infra", nil)
	ws := s.waitWorkspace("fast", 3*time.Minute, "applies in one run", appliedRevision(rev))
	assert.Equal(t, []string{magosv1.RunPlanApply}, runsOf(t, s.ns, "fast", rev), "one Job plans and applies")
	var jobs batchv1.JobList
	require.NoError(t, env.Client.List(context.Background(), &jobs, client.InNamespace(s.ns), client.MatchingLabels{magosv1.WorkspaceLabel: "fast"}))
	require.Len(t, jobs.Items, 1)
	job := jobs.Items[0]
	assert.Equal(t, magosv1.RunnerServiceAccountName("fast"), job.Spec.Template.Spec.ServiceAccountName, "with the apply identity")
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		if e.Name == magosv1.EnvPlanDigest || e.Name == magosv1.EnvPlanBundleDigest {
			assert.Empty(t, e.Value, "a fast run has no approved plan to prove")
		}
	}
	assert.Equal(t, []string{magosv1.RunPlanApply}, job.Spec.Template.Spec.Containers[0].Args)
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: magosv1.PlanRunnerServiceAccountName("fast")}, &corev1.ServiceAccount{})
	assert.True(t, apierrors.IsNotFound(err), "the plan identity is not created for a fast run: %v", err)

	plan := ws.Status.Plan
	require.NotNil(t, plan)
	assert.True(t, plan.AppliedWithoutGate, "the plan is marked as applied without a gate")
	assert.Equal(t, int32(2), plan.Add, "counts read from what the engine printed")
	assert.True(t, plan.HasChanges)
	assert.NotEmpty(t, plan.BundleDigest, "the stored plan is sealed for plan show")
	assert.Equal(t, plan.ID, ws.Status.LastApplied.PlanID)
	assert.Equal(t, []string{"message", "secret_digest"}, ws.Status.Outputs)
	assert.Equal(t, magosv1.RunPlanApply, ws.Status.History[0].Phase)
	assert.True(t, recorded(t, s.ns, "fast", magosv1.ReasonApplied))
	shown := s.magos("plan", "show", "fast")
	require.Equal(t, 0, shown.code, "%s", shown)
	assert.Contains(t, shown.stdout, "terraform_data.greeting will be created", "the stored plan is shown: %s", shown)
	assert.Contains(t, shown.stdout, "applied without a gate", "and said to be applied without a gate: %s", shown)
	assert.Contains(t, shown.stdout, "NOT VERIFIED: the text the engine printed", "its text marked as the run's: %s", shown)

	t.Run("a revision without changes is one Job and no apply", func(t *testing.T) {
		before := s.waitWorkspace("fast", time.Minute, "is applied", appliedRevision(rev))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), []byte("docs only\n"), 0o644))
		rev2 := s.publish("infra", dir)
		ws := s.waitWorkspace("fast", 3*time.Minute, "settles on the new revision", appliedRevision(rev2))
		assert.Equal(t, []string{magosv1.RunPlanApply}, runsOf(t, s.ns, "fast", rev2))
		assert.False(t, ws.Status.Plan.HasChanges)
		assert.Equal(t, before.Status.OutputVersions, ws.Status.OutputVersions, "nothing applied, no output changed")
	})

	t.Run("a policy that selects the Workspace sends the next revision through the gate", func(t *testing.T) {
		patchWorkspace(t, s.ns, "fast", passingPolicy(t))
		main, err := os.ReadFile(filepath.Join(dir, "main.tf"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(strings.Replace(string(main), `default = "hello"`, `default = "bonjour"`, 1)), 0o644))
		rev3 := s.publish("infra", dir)
		ws := s.waitWorkspace("fast", 3*time.Minute, "applies through the gate", appliedRevision(rev3))
		assert.ElementsMatch(t, []string{magosv1.RunPlan, magosv1.RunApply}, runsOf(t, s.ns, "fast", rev3), "a plan Job and an apply Job")
		assert.False(t, ws.Status.Plan.AppliedWithoutGate)
		assert.Len(t, ws.Status.Plan.Policy.Policies, 1, "the policy was evaluated")
	})

	t.Run("Manual approval plans and waits", func(t *testing.T) {
		s.newWorkspace("manual", "infra", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
		ws := s.waitWorkspace("manual", 3*time.Minute, "awaits approval", func(ws *magosv1.Workspace) bool { return ws.Status.Phase == magosv1.PhaseAwaitingApproval })
		assert.Equal(t, []string{magosv1.RunPlan}, runsOf(t, s.ns, "manual", ws.Status.Plan.Revision))
	})

	t.Run("a destroy is planned and applied apart", func(t *testing.T) {
		s.newWorkspace("doomed", "infra", nil)
		ws := s.waitWorkspace("doomed", 3*time.Minute, "applies", func(ws *magosv1.Workspace) bool {
			return ws.Status.LastApplied != nil && ws.Status.Phase == magosv1.PhaseIdle
		})
		assert.Equal(t, []string{magosv1.RunPlanApply}, runsOf(t, s.ns, "doomed", ws.Status.LastApplied.Revision))
		patchWorkspace(t, s.ns, "doomed", func(ws *magosv1.Workspace) { ws.Spec.Mode = magosv1.ModeDestroy })
		s.waitWorkspace("doomed", 3*time.Minute, "destroys", func(ws *magosv1.Workspace) bool {
			return ws.Status.Plan != nil && ws.Status.Plan.Mode == magosv1.PlanModeDestroy && ws.Status.LastApplied.PlanID == ws.Status.Plan.ID
		})
		assert.Equal(t, 1, countJobs(t, s.ns, "doomed", magosv1.RunPlan), "the destroy is planned")
		assert.Equal(t, 1, countJobs(t, s.ns, "doomed", magosv1.RunApply), "and applied apart, with the proof")
	})
}

// TestFastPathGuard: --always-separate-plan-identity plans and applies
// every run in separate Jobs, also where nothing decides on the plan.
func TestFastPathGuard(t *testing.T) {
	env.Require(t)
	s := newStackWith(t, stackOptions{Workspace: func(o *config.Options) { o.Guards.AlwaysSeparatePlanIdentity = true }})
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("split", "infra", nil)
	ws := s.waitWorkspace("split", 3*time.Minute, "applies", appliedRevision(rev))
	assert.ElementsMatch(t, []string{magosv1.RunPlan, magosv1.RunApply}, runsOf(t, s.ns, "split", rev))
	assert.False(t, ws.Status.Plan.AppliedWithoutGate)
}
