package workspace_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// An apply that finds its plan stale (the state moved on, or the stored
// plan is not the approved one) is planned again at once, never retried
// with the same plan and never after the retry interval.
func TestStalePlanIsPlannedAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Hour)
	f.newWorkspace("stale", nil)
	first := waitJob(t, f.ns, "stale", magosv1.RunPlan)
	complete(t, first, planWithChanges)
	apply := waitJob(t, f.ns, "stale", magosv1.RunApply)
	report(t, apply, magosv1.RunResult{Result: magosv1.ResultStale, Reason: magosv1.ReasonPlanStale, Message: "the state changed since the plan was made"})

	second := waitJob(t, f.ns, "stale", magosv1.RunPlan)
	assert.NotEqual(t, jobEnv(first, magosv1.EnvPlanID), jobEnv(second, magosv1.EnvPlanID), "a new plan")
	assert.Equal(t, f.Revision, jobEnv(second, magosv1.EnvRevision))
	ws := f.waitWorkspace("stale", "plans again", inPhase(magosv1.PhasePlanning))
	require.NotEmpty(t, ws.Status.History)
	assert.Equal(t, magosv1.ResultStale, ws.Status.History[0].Result)
	assert.Equal(t, 1, jobsIn(t, f.ns, "stale", magosv1.RunApply), "the stale plan is not applied again")

	complete(t, second, planWithChanges)
	again := waitJob(t, f.ns, "stale", magosv1.RunApply)
	assert.Equal(t, jobEnv(second, magosv1.EnvPlanID), jobEnv(again, magosv1.EnvPlanID), "the new plan is applied")
}
