package workspace_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// fastPath lets the controller take the fast path (the suite's default
// asks for separate plan and apply Jobs).
func fastPath(o *config.Options) { o.Guards.AlwaysSeparatePlanIdentity = false }

// A fast run is recorded in one step: its plan, marked as applied without
// a gate, and its apply; the Workspace is Applying while it runs.
func TestFastRunRecordsItsPlanAndApply(t *testing.T) {
	t.Parallel()
	f := newTunedFixture(t, time.Minute, fastPath)
	f.newWorkspace("fast", nil)

	job := waitJob(t, f.ns, "fast", magosv1.RunPlanApply)
	assert.Equal(t, magosv1.RunnerServiceAccountName("fast"), job.Spec.Template.Spec.ServiceAccountName, "the apply identity")
	planID := jobEnv(job, magosv1.EnvPlanID)
	require.NotEmpty(t, planID, "the run stores its plan under an ID the controller chose")
	assert.Empty(t, jobEnv(job, magosv1.EnvPlanDigest), "nothing was approved")
	ws := f.waitWorkspace("fast", "applies", inPhase(magosv1.PhaseApplying))
	assertReadiness(t, ws, readiness{Ready: "False/" + magosv1.ReasonApplying, Reconciling: "True/" + magosv1.ReasonApplying, Kstatus: status.InProgressStatus})

	complete(t, job, magosv1.RunResult{HasChanges: true, Add: 2, Storage: "plan", Outputs: []string{"url"}})
	ws = f.waitWorkspace("fast", "is applied", inPhase(magosv1.PhaseIdle))
	assertReadiness(t, ws, settledReady)
	require.NotNil(t, ws.Status.Plan)
	assert.Equal(t, planID, ws.Status.Plan.ID)
	assert.True(t, ws.Status.Plan.AppliedWithoutGate)
	assert.Equal(t, int32(2), ws.Status.Plan.Add)
	assert.NotEmpty(t, ws.Status.Plan.BundleDigest)
	assert.Equal(t, planID, ws.Status.LastApplied.PlanID)
	assert.Equal(t, []string{"url"}, ws.Status.Outputs)
	assert.Equal(t, "True/"+magosv1.ReasonApplied, condition(ws, magosv1.AppliedCondition))
	assert.Equal(t, "True/"+magosv1.ReasonPolicyPassed, condition(ws, magosv1.PolicyPassedCondition))
	assert.Equal(t, 1, len(runJobs(t, f.ns, "fast")), "one Job")
}

// A fast run that fails is retried after the retry interval with a new
// fast run: nothing of its plan is kept.
func TestFailedFastRunIsRetried(t *testing.T) {
	t.Parallel()
	f := newTunedFixture(t, 2*time.Second, fastPath)
	f.newWorkspace("fast", nil)
	first := waitJob(t, f.ns, "fast", magosv1.RunPlanApply)
	report(t, first, magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonApplyFailed, Message: "provider error"})

	ws := f.waitWorkspace("fast", "waits to retry", inPhase(magosv1.PhaseFailed))
	assert.Nil(t, ws.Status.Plan, "a failed fast run leaves no plan to apply")
	assert.Nil(t, ws.Status.LastApplied)
	assert.Equal(t, magosv1.ReasonApplyFailed, ws.Status.History[0].Reason)

	second := waitJob(t, f.ns, "fast", magosv1.RunPlanApply)
	assert.NotEqual(t, first.Name, second.Name, "a new run")
}
