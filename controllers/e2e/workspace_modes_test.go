package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// stateIDs maps each resource of a Workspace's state ("type.name") to the
// id of its instance; empty when the state Secret holds no state yet.
func stateIDs(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	raw := stateJSON(t, ns, name)
	if raw == "" {
		return map[string]string{}
	}
	var state struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				Attributes struct {
					ID string `json:"id"`
				} `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &state))
	ids := map[string]string{}
	for _, r := range state.Resources {
		for _, in := range r.Instances {
			ids[r.Type+"."+r.Name] = in.Attributes.ID
		}
	}
	return ids
}

// patchWorkspace changes Workspace name with mutate (a merge patch).
func patchWorkspace(t *testing.T, ns, name string, mutate func(*magosv1.Workspace)) {
	t.Helper()
	ws := &magosv1.Workspace{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, ws))
	patch := client.MergeFrom(ws.DeepCopy())
	mutate(ws)
	require.NoError(t, env.Client.Patch(context.Background(), ws, patch))
}

// requestReconcile asks for a plan now (Flux's reconcile request).
func requestReconcile(t *testing.T, ns, name string) {
	t.Helper()
	patchWorkspace(t, ns, name, func(ws *magosv1.Workspace) {
		if ws.Annotations == nil {
			ws.Annotations = map[string]string{}
		}
		ws.Annotations[magosv1.ReconcileRequestAnnotation] = time.Now().Format(time.RFC3339Nano)
	})
}

// newPlanAfter is a wait condition: a plan other than planID is in
// status and the Workspace is Idle.
func newPlanAfter(planID string) func(*magosv1.Workspace) bool {
	return func(ws *magosv1.Workspace) bool {
		return ws.Status.Plan != nil && ws.Status.Plan.ID != planID && ws.Status.Phase == magosv1.PhaseIdle && ws.Status.CurrentRun == nil
	}
}

// A plan-only Workspace plans with the real engine, reports the plan and
// never applies it: the state stays empty, also after a re-plan.
func TestWorkspacePlanOnlyNeverApplies(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("review", "infra", func(ws *magosv1.Workspace) { ws.Spec.Mode = magosv1.ModePlanOnly })
	ws := s.waitWorkspace("review", 3*time.Minute, "reports its plan", newPlanAfter(""))
	assert.True(t, conditions.IsTrue(ws, magosv1.ReadyCondition), "a plan-only Workspace is Ready once it planned")
	assert.True(t, conditions.IsTrue(ws, magosv1.DriftedCondition), "its unapplied changes are reported as drift")
	assert.Equal(t, int32(2), ws.Status.Plan.Add)
	assert.Equal(t, "none (plan-only; plan +2 ~0 -0)", ws.Status.Plan.NextApply)
	require.NotNil(t, ws.Status.Plan.Policy, "the policy gate evaluated the plan")
	assert.True(t, ws.Status.Plan.Policy.Passed)

	requestReconcile(t, s.ns, "review")
	ws = s.waitWorkspace("review", 3*time.Minute, "plans again", newPlanAfter(ws.Status.Plan.ID))
	assert.True(t, ws.Status.Plan.HasChanges, "nothing was applied in between")
	assert.Zero(t, applyJobs(t, s.ns, "review"), "no apply ran")
	assert.Empty(t, stateIDs(t, s.ns, "review"), "the state is untouched")
	assert.Nil(t, ws.Status.LastApplied)
}

// Mode Destroy on a live Workspace: a policy that refuses deletes blocks
// the destroy plan; once the policy no longer applies the destroy is
// applied, the state is empty, and a plan afterwards has no changes (the
// Workspace stays destroyed).
func TestWorkspaceDestroyModeDestroysAndStaysDestroyed(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	label := rand.String(8)
	validatingPolicy(t, "v1", label, "Deny", forbidsDeletes, "deleting resources is not allowed here")
	s.newWorkspace("gone", "infra", selecting(label))
	s.waitWorkspace("gone", 3*time.Minute, "applies", appliedRevision(rev))
	require.Len(t, stateIDs(t, s.ns, "gone"), 2)

	patchWorkspace(t, s.ns, "gone", func(ws *magosv1.Workspace) { ws.Spec.Mode = magosv1.ModeDestroy })
	ws := s.waitWorkspace("gone", 3*time.Minute, "is blocked by policy", func(ws *magosv1.Workspace) bool {
		return ws.Status.Plan != nil && ws.Status.Plan.Mode == magosv1.PlanModeDestroy && conditions.IsTrue(ws, magosv1.StalledCondition)
	})
	assert.Equal(t, magosv1.ReasonPolicyViolation, conditions.Get(ws, magosv1.StalledCondition).Reason)
	assert.Equal(t, "destroy -2", ws.Status.Plan.NextApply)
	assert.Len(t, stateIDs(t, s.ns, "gone"), 2, "nothing was destroyed")

	patchWorkspace(t, s.ns, "gone", func(ws *magosv1.Workspace) { ws.Spec.Policy = nil })
	destroyPlan := ws.Status.Plan.ID
	ws = s.waitWorkspace("gone", 3*time.Minute, "destroys", func(ws *magosv1.Workspace) bool {
		return ws.Status.LastApplied != nil && ws.Status.LastApplied.PlanID == destroyPlan && ws.Status.Phase == magosv1.PhaseIdle
	})
	assert.True(t, conditions.IsTrue(ws, magosv1.ReadyCondition))
	assert.Empty(t, stateIDs(t, s.ns, "gone"), "the destroy emptied the state")

	requestReconcile(t, s.ns, "gone")
	ws = s.waitWorkspace("gone", 3*time.Minute, "plans again", newPlanAfter(destroyPlan))
	assert.False(t, ws.Status.Plan.HasChanges, "a destroyed Workspace stays destroyed: %+v", ws.Status.Plan)
	assert.Empty(t, stateIDs(t, s.ns, "gone"))
	assert.Len(t, destroyRunJobs(t, s.ns, "gone", magosv1.RunApply), 1, "one destroy was applied")
}

// A one-off -replace re-creates exactly the named resource; the next plan
// is a full plan with no changes.
func TestWorkspacePlanRequestReplacesOnce(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("once", "infra", nil)
	s.waitWorkspace("once", 3*time.Minute, "applies", appliedRevision(rev))
	before := stateIDs(t, s.ns, "once")
	require.Len(t, before, 2)

	patchWorkspace(t, s.ns, "once", func(ws *magosv1.Workspace) {
		ws.Spec.PlanRequest = &magosv1.PlanRequest{ID: "r1", Replace: []string{"terraform_data.greeting"}}
	})
	ws := s.waitWorkspace("once", 3*time.Minute, "applies the replace", func(ws *magosv1.Workspace) bool {
		p := ws.Status.Plan
		return p != nil && p.Request != nil && ws.Status.LastApplied != nil && ws.Status.LastApplied.PlanID == p.ID && ws.Status.Phase == magosv1.PhaseIdle
	})
	assert.Equal(t, "r1", ws.Status.LastHandledPlanRequest)
	assert.Equal(t, int32(1), ws.Status.Plan.Add, "the replace adds one")
	assert.Equal(t, int32(1), ws.Status.Plan.Destroy, "and destroys one")
	after := stateIDs(t, s.ns, "once")
	assert.NotEqual(t, before["terraform_data.greeting"], after["terraform_data.greeting"], "the named resource was re-created")
	assert.Equal(t, before["terraform_data.secret"], after["terraform_data.secret"], "the other was left alone")

	requestReconcile(t, s.ns, "once")
	ws = s.waitWorkspace("once", 3*time.Minute, "plans again", newPlanAfter(ws.Status.Plan.ID))
	assert.Nil(t, ws.Status.Plan.Request, "the next plan is a full plan")
	assert.False(t, ws.Status.Plan.HasChanges)
	assert.Equal(t, after, stateIDs(t, s.ns, "once"), "nothing was replaced again")
}
