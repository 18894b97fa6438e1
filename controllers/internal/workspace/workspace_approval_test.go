package workspace_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

var (
	settledReady = readiness{Ready: "True/" + magosv1.ReconciliationSucceededReason, Kstatus: status.CurrentStatus}
	// awaitingApproval waits for a person: Ready=False, neither Reconciling
	// nor Stalled; kstatus's Ready fallback reads it as InProgress.
	awaitingApproval = readiness{Ready: "False/" + magosv1.ReasonAwaitingApproval, Kstatus: status.InProgressStatus}
)

// planWithChanges is a plan run's report of a plan that changes things.
var planWithChanges = magosv1.RunResult{PlanDigest: "sha256:1f2e", HasChanges: true, Add: 2, Change: 1, Storage: "plan"}

// With approval: Auto a plan with changes is applied: the apply Job gets the
// plan's ID and the digest the runner reported, and once it succeeded the
// Workspace is Ready and Applied, with lastApplied naming the plan.
func TestAutoApprovalAppliesThePlan(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	f.newWorkspace("auto", nil)

	plan := waitJob(t, f.ns, "auto", magosv1.RunPlan)
	planID := jobEnv(plan, magosv1.EnvPlanID)
	require.NotEmpty(t, planID, "the plan run is told the ID to store its plan under")
	assert.Equal(t, f.Revision, jobEnv(plan, magosv1.EnvRevision))
	ws := f.waitWorkspace("auto", "plans", inPhase(magosv1.PhasePlanning))
	assertReadiness(t, ws, readiness{Ready: "False/" + magosv1.ReasonPlanning, Reconciling: "True/" + magosv1.ReasonPlanning, Kstatus: status.InProgressStatus})

	complete(t, plan, planWithChanges)
	apply := waitJob(t, f.ns, "auto", magosv1.RunApply)
	assert.Equal(t, planID, jobEnv(apply, magosv1.EnvPlanID), "the apply applies the plan just made")
	assert.Equal(t, reportedDigest(planWithChanges), jobEnv(apply, magosv1.EnvPlanDigest), "and checks the digest the gate saw")
	ws = f.waitWorkspace("auto", "applies", inPhase(magosv1.PhaseApplying))
	require.NotNil(t, ws.Status.Plan)
	assert.Equal(t, planID, ws.Status.Plan.ID)
	assert.Equal(t, int32(2), ws.Status.Plan.Add)
	assert.Equal(t, "True/"+magosv1.ReasonPlanned, condition(ws, magosv1.PlannedCondition))
	assert.Equal(t, "False/NotApplied", condition(ws, magosv1.AppliedCondition))

	complete(t, apply, magosv1.RunResult{Outputs: []string{"url"}})
	ws = f.waitWorkspace("auto", "is applied", inPhase(magosv1.PhaseIdle))
	assertReadiness(t, ws, settledReady)
	assert.Equal(t, "True/"+magosv1.ReasonApplied, condition(ws, magosv1.AppliedCondition))
	require.NotNil(t, ws.Status.LastApplied)
	assert.Equal(t, planID, ws.Status.LastApplied.PlanID)
	assert.Equal(t, f.Revision, ws.Status.LastApplied.Revision)
	assert.Equal(t, []string{"url"}, ws.Status.Outputs)
	assert.Nil(t, ws.Status.CurrentRun)
	assert.Equal(t, 1, jobsIn(t, f.ns, "auto", magosv1.RunPlan), "one plan")
	assert.Equal(t, 1, jobsIn(t, f.ns, "auto", magosv1.RunApply), "one apply")
}

// A plan without changes is not applied: the Workspace is Ready and
// Applied at once, and no apply Job starts.
func TestPlanWithoutChangesIsNotApplied(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	f.newWorkspace("nochange", nil)

	plan := waitJob(t, f.ns, "nochange", magosv1.RunPlan)
	complete(t, plan, magosv1.RunResult{PlanDigest: "sha256:0000", Storage: "plan"})
	ws := f.waitWorkspace("nochange", "is Ready", inPhase(magosv1.PhaseIdle))
	assertReadiness(t, ws, settledReady)
	assert.Equal(t, "True/"+magosv1.ReasonNoChanges, condition(ws, magosv1.PlannedCondition))
	assert.Equal(t, "True/"+magosv1.ReasonApplied, condition(ws, magosv1.AppliedCondition))
	require.NotNil(t, ws.Status.LastApplied)
	assert.Equal(t, jobEnv(plan, magosv1.EnvPlanID), ws.Status.LastApplied.PlanID)
	assert.Equal(t, f.Revision, ws.Status.LastApplied.Revision)
	assert.Zero(t, jobsIn(t, f.ns, "nochange", magosv1.RunApply), "nothing to apply")
}

// With approval: Manual a plan waits, settled but not Ready, until
// spec.approvedPlan names it; approving another plan applies nothing.
func TestManualApprovalWaitsForTheNamedPlan(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	f.newWorkspace("manual", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })

	plan := waitJob(t, f.ns, "manual", magosv1.RunPlan)
	planID := jobEnv(plan, magosv1.EnvPlanID)
	complete(t, plan, planWithChanges)
	ws := f.waitWorkspace("manual", "awaits approval", inPhase(magosv1.PhaseAwaitingApproval))
	assertReadiness(t, ws, awaitingApproval)
	assert.Contains(t, readyMessage(ws), planID, "the message names the plan to approve")
	assert.Equal(t, "False/NotApplied", condition(ws, magosv1.AppliedCondition))
	assert.Zero(t, jobsIn(t, f.ns, "manual", magosv1.RunApply), "nothing is applied before approval")

	f.update("manual", func(ws *magosv1.Workspace) { ws.Spec.ApprovedPlan = "another-plan" })
	ws = f.waitWorkspace("manual", "still awaits approval", inPhase(magosv1.PhaseAwaitingApproval))
	assertReadiness(t, ws, awaitingApproval)
	assert.Zero(t, jobsIn(t, f.ns, "manual", magosv1.RunApply), "an approval of another plan applies nothing")

	f.update("manual", func(ws *magosv1.Workspace) { ws.Spec.ApprovedPlan = planID })
	apply := waitJob(t, f.ns, "manual", magosv1.RunApply)
	assert.Equal(t, planID, jobEnv(apply, magosv1.EnvPlanID), "the approved plan is applied")
	assert.Equal(t, reportedDigest(planWithChanges), jobEnv(apply, magosv1.EnvPlanDigest))
	complete(t, apply, magosv1.RunResult{})
	ws = f.waitWorkspace("manual", "is applied", inPhase(magosv1.PhaseIdle))
	assertReadiness(t, ws, settledReady)
	assert.Equal(t, planID, ws.Status.LastApplied.PlanID)
}
