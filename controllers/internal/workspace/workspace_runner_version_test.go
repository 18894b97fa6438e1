package workspace_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// A runner reports its run contract and version. The report of a runner
// of another contract, or of none (an image from before the contract was
// reported, which an allow-list of tag patterns may still admit), is not
// trusted: its successful plan is a failed run, RunnerVersionMismatch,
// and no plan is recorded. A runner of the same contract but another
// version is trusted, and a Warning event and the run's message say so.
func TestRunnerVersionIsChecked(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	manual := func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual }

	f.newWorkspace("old-runner", manual)
	plan := waitJob(t, f.ns, "old-runner", magosv1.RunPlan)
	res := magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultSucceeded, Add: 1, HasChanges: true, RunnerVersion: "0.0.1"}
	res.PlanDigest = storeReportedPlan(t, plan, res)
	rawReport(t, plan, res)
	ws := f.waitWorkspace("old-runner", "records the run", func(ws *magosv1.Workspace) bool { return len(ws.Status.History) > 0 })
	assert.Equal(t, magosv1.ResultFailed, ws.Status.History[0].Result)
	assert.Equal(t, magosv1.ReasonRunnerVersionMismatch, ws.Status.History[0].Reason)
	assert.Contains(t, ws.Status.History[0].Message, "speaks run contract 0")
	assert.Nil(t, ws.Status.Plan, "the plan of a runner of another contract is not recorded")
	require.Eventually(t, func() bool { return eventCounts(t, f.ns, "old-runner")[magosv1.ReasonRunnerVersionMismatch] > 0 },
		30*time.Second, 100*time.Millisecond, "a Warning event names the mismatch")

	f.newWorkspace("other-build", manual)
	plan = waitJob(t, f.ns, "other-build", magosv1.RunPlan)
	res = magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultSucceeded, Add: 1, HasChanges: true,
		Contract: magosv1.RunContractMajor, RunnerVersion: "9.9.9-other"}
	res.PlanDigest = storeReportedPlan(t, plan, res)
	rawReport(t, plan, res)
	ws = f.waitWorkspace("other-build", "awaits approval", inPhase(magosv1.PhaseAwaitingApproval))
	require.NotNil(t, ws.Status.Plan, "a runner of the same contract is trusted")
	assert.Contains(t, ws.Status.History[0].Message, "the runner is version 9.9.9-other")
	require.Eventually(t, func() bool { return eventCounts(t, f.ns, "other-build")[magosv1.ReasonRunnerVersionMismatch] > 0 },
		30*time.Second, 100*time.Millisecond, "a Warning event names the mismatch")
}
