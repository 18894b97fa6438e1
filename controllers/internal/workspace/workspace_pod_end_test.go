package workspace_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

// A run ends when its Job's Pod succeeded, before the job controller marks
// the Job complete (it batches Pod updates for about a second): the report
// of a Pod the Job controls, which the kubelet says exited 0, is what a
// complete Job would say.
func TestARunEndsWhenItsPodSucceeded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, time.Minute)
	f.newWorkspace("podend", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	plan := waitJob(t, f.ns, "podend", magosv1.RunPlan)

	res := magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultSucceeded, Add: 1, HasChanges: true,
		Contract: magosv1.RunContractMajor, RunnerVersion: setup.Version}
	res.PlanDigest = storeReportedPlan(t, plan, res)
	msg, err := json.Marshal(res)
	require.NoError(t, err)
	endPod(t, plan, magosv1.ExitSucceeded, string(msg))

	ws := f.waitWorkspace("podend", "records the plan its Pod reported", func(ws *magosv1.Workspace) bool { return ws.Status.Plan != nil })
	require.NotEmpty(t, ws.Status.History)
	assert.Equal(t, magosv1.ResultSucceeded, ws.Status.History[0].Result)
	assert.Equal(t, res.PlanDigest, ws.Status.Plan.Digest)
	live := &batchv1.Job{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(plan), live))
	assert.False(t, jobDone(live), "recorded while the Job is not complete yet")

	// The Job completing later changes nothing: the run is recorded once.
	finishJob(t, live, batchv1.JobSuccessCriteriaMet, batchv1.JobComplete, completionsReached, completionsReachedMsg)
	assert.Never(t, func() bool { return len(f.get("podend").Status.History) != len(ws.Status.History) },
		2*time.Second, 100*time.Millisecond, "no second record of the run")
}
