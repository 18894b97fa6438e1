package workspace_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// observed is a wait condition that holds once the Workspace's status
// describes its current generation (waitWorkspace checks that).
func observed(*magosv1.Workspace) bool { return true }

// applyFirstPlan plans and applies Workspace name's first plan.
func applyFirstPlan(t *testing.T, f *fixture, name string) {
	t.Helper()
	complete(t, waitJob(t, f.ns, name, magosv1.RunPlan), planWithChanges)
	complete(t, waitJob(t, f.ns, name, magosv1.RunApply), magosv1.RunResult{})
	f.waitWorkspace(name, "is applied", inPhase(magosv1.PhaseIdle))
}

// A plan-only Workspace plans and reports the plan (Ready, Drifted with
// the plan's counts, nextApply none) and never applies it, approved or
// not; switched to mode Apply it applies the plan through the gate.
func TestPlanOnlyNeverApplies(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	f.newWorkspace("review", func(ws *magosv1.Workspace) {
		ws.Spec.Mode = magosv1.ModePlanOnly
		ws.Spec.Approval = magosv1.ApprovalManual
	})

	plan := waitJob(t, f.ns, "review", magosv1.RunPlan)
	assert.Empty(t, jobEnv(plan, magosv1.EnvPlanMode), "a plan-only plan is a normal plan")
	complete(t, plan, planWithChanges)
	ws := f.waitWorkspace("review", "reports the plan", func(ws *magosv1.Workspace) bool { return ws.Status.Plan != nil && ws.Status.Phase == magosv1.PhaseIdle })
	assertReadiness(t, ws, settledReady)
	assert.Contains(t, readyMessage(ws), "Plan-only: plan "+ws.Status.Plan.ID)
	assert.Equal(t, "True/"+magosv1.ReasonPlanOnly, condition(ws, magosv1.DriftedCondition), "a plan with changes that nothing applies is drift")
	assert.Equal(t, "False/NotApplied", condition(ws, magosv1.AppliedCondition))
	assert.Equal(t, "True/"+magosv1.ReasonPolicyPassed, condition(ws, magosv1.PolicyPassedCondition), "the gate's verdict is reported")
	assert.Equal(t, "none (plan-only; plan +2 ~1 -0)", ws.Status.Plan.NextApply)

	planID := ws.Status.Plan.ID
	f.update("review", func(ws *magosv1.Workspace) { ws.Spec.ApprovedPlan = planID })
	ws = f.waitWorkspace("review", "observes the approval", observed)
	assert.Equal(t, magosv1.PhaseIdle, ws.Status.Phase)
	assert.Zero(t, jobsIn(t, f.ns, "review", magosv1.RunApply), "approving a plan-only plan does not apply it")

	f.update("review", func(ws *magosv1.Workspace) { ws.Spec.Mode = magosv1.ModeApply })
	apply := waitJob(t, f.ns, "review", magosv1.RunApply)
	assert.Equal(t, planID, jobEnv(apply, magosv1.EnvPlanID), "in mode Apply the approved plan is applied")
}

// Mode Destroy on a live Workspace plans a destroy, waits for its approval,
// applies exactly that plan, and stays destroyed: later plans are destroy
// plans. Back in mode Apply it plans normally.
func TestDestroyModeDestroysAndStaysDestroyed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	f.newWorkspace("gone", nil)
	applyFirstPlan(t, f, "gone")

	f.update("gone", func(ws *magosv1.Workspace) {
		ws.Spec.Mode = magosv1.ModeDestroy
		ws.Spec.Approval = magosv1.ApprovalManual
	})
	plan := waitJob(t, f.ns, "gone", magosv1.RunPlan)
	assert.Equal(t, string(magosv1.PlanModeDestroy), jobEnv(plan, magosv1.EnvPlanMode), "the plan is a destroy plan")
	destroyPlan := magosv1.RunResult{PlanDigest: "sha256:dead", HasChanges: true, Destroy: 2, Storage: "plan"}
	complete(t, plan, destroyPlan)
	ws := f.waitWorkspace("gone", "awaits approval", inPhase(magosv1.PhaseAwaitingApproval))
	assertReadiness(t, ws, awaitingApproval)
	assert.Contains(t, readyMessage(ws), "Destroy plan "+ws.Status.Plan.ID)
	assert.Equal(t, "destroy -2", ws.Status.Plan.NextApply)
	assert.Equal(t, 1, jobsIn(t, f.ns, "gone", magosv1.RunApply), "nothing but the first apply ran")

	planID := ws.Status.Plan.ID
	f.update("gone", func(ws *magosv1.Workspace) { ws.Spec.ApprovedPlan = planID })
	apply := waitJob(t, f.ns, "gone", magosv1.RunApply)
	assert.Equal(t, planID, jobEnv(apply, magosv1.EnvPlanID), "the apply applies the approved destroy plan")
	assert.Equal(t, reportedDigest(destroyPlan), jobEnv(apply, magosv1.EnvPlanDigest))
	assert.Equal(t, string(magosv1.PlanModeDestroy), jobEnv(apply, magosv1.EnvPlanMode))
	f.waitWorkspace("gone", "destroys", inPhase(magosv1.PhaseDestroying))
	complete(t, apply, magosv1.RunResult{})
	ws = f.waitWorkspace("gone", "is destroyed", inPhase(magosv1.PhaseIdle))
	assertReadiness(t, ws, settledReady)
	assert.Contains(t, readyMessage(ws), "Destroyed")
	assert.Equal(t, "none", ws.Status.Plan.NextApply)

	f.update("gone", func(ws *magosv1.Workspace) {
		ws.Annotations = map[string]string{magosv1.ReconcileRequestAnnotation: "again"}
	})
	replan := waitJob(t, f.ns, "gone", magosv1.RunPlan)
	assert.Equal(t, string(magosv1.PlanModeDestroy), jobEnv(replan, magosv1.EnvPlanMode), "a destroyed Workspace keeps planning destroys")
	complete(t, replan, magosv1.RunResult{PlanDigest: "sha256:0000", Storage: "plan"})
	ws = f.waitWorkspace("gone", "stays destroyed", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseIdle && ws.Status.Plan != nil && ws.Status.Plan.ID != planID
	})
	assertReadiness(t, ws, settledReady)

	f.update("gone", func(ws *magosv1.Workspace) { ws.Spec.Mode = magosv1.ModeApply })
	normal := waitJob(t, f.ns, "gone", magosv1.RunPlan)
	assert.Empty(t, jobEnv(normal, magosv1.EnvPlanMode), "back in mode Apply the Workspace plans normally")
}

// A plan request plans once with its addresses; the plan is applied like
// any other, and the next plan is a full plan.
func TestPlanRequestIsHandledOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	f.newWorkspace("once", nil)
	applyFirstPlan(t, f, "once")

	rq := &magosv1.PlanRequest{ID: "r1", Targets: []string{`terraform_data.a["x,y"]`, "module.db"}, Replace: []string{"terraform_data.b"}}
	f.update("once", func(ws *magosv1.Workspace) { ws.Spec.PlanRequest = rq })
	plan := waitJob(t, f.ns, "once", magosv1.RunPlan)
	assert.Equal(t, "terraform_data.a[\"x,y\"]\nmodule.db", jobEnv(plan, magosv1.EnvPlanTargets))
	assert.Equal(t, "terraform_data.b", jobEnv(plan, magosv1.EnvPlanReplace))
	complete(t, plan, planWithChanges)
	apply := waitJob(t, f.ns, "once", magosv1.RunApply)
	// The apply Job is created before the status that records the plan is
	// written.
	ws := f.waitWorkspace("once", "records the plan it applies", func(ws *magosv1.Workspace) bool {
		return ws.Status.Plan != nil && ws.Status.Plan.Request != nil
	})
	assert.Equal(t, rq, ws.Status.Plan.Request, "the plan shows its addresses")
	assert.Equal(t, "r1", ws.Status.LastHandledPlanRequest)
	assert.Equal(t, "targeted apply +2 ~1 -0 (-target terraform_data.a[\"x,y\"] -target module.db -replace terraform_data.b)", ws.Status.Plan.NextApply)
	complete(t, apply, magosv1.RunResult{})
	f.waitWorkspace("once", "is applied", inPhase(magosv1.PhaseIdle))

	f.update("once", func(ws *magosv1.Workspace) {
		ws.Annotations = map[string]string{magosv1.ReconcileRequestAnnotation: "again"}
	})
	next := waitJob(t, f.ns, "once", magosv1.RunPlan)
	assert.Empty(t, jobEnv(next, magosv1.EnvPlanTargets), "the request was handled: the next plan is a full plan")
	assert.Empty(t, jobEnv(next, magosv1.EnvPlanReplace))
}

// Plan request addresses are checked at admission.
func TestPlanRequestAddressesAreValidated(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	for name, rq := range map[string]magosv1.PlanRequest{
		"not-an-address": {ID: "r", Targets: []string{"-lock=false"}},
		"replace-module": {ID: "r", Replace: []string{"module.db"}},
		"replace-data":   {ID: "r", Replace: []string{"module.m.data.x.y"}},
		"replace-index":  {ID: "r", Replace: []string{"module.m[0]"}},
		"empty":          {ID: "r"},
	} {
		ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
			Spec: magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: sourceName}, PlanRequest: &rq}}
		require.Error(t, env.Client.Create(context.Background(), ws), name)
	}
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "destroy-replace", Namespace: f.ns},
		Spec: magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: sourceName}, Mode: magosv1.ModeDestroy,
			PlanRequest: &magosv1.PlanRequest{ID: "r", Replace: []string{"terraform_data.a"}}}}
	assert.ErrorContains(t, env.Client.Create(context.Background(), ws), "planRequest.replace cannot be used with mode Destroy")
	ws.Spec.PlanRequest = &magosv1.PlanRequest{ID: "r", Targets: []string{`module.net[0].data.x.y`, `aws_instance.web["a b"]`}}
	assert.NoError(t, env.Client.Create(context.Background(), ws), "targets are allowed in a destroy")
}
