package workspace_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// A run whose start the status lost (a status patch that lost a conflict,
// a restart) is adopted from its Job, never doubled: not even a newer
// revision starts a second run next to it. The newer revision is planned
// once the adopted run has finished.
func TestLostStatusAdoptsTheRunningJob(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	f.newWorkspace("adopt", nil)
	job := waitJob(t, f.ns, "adopt", magosv1.RunPlan)
	f.waitWorkspace("adopt", "plans", func(ws *magosv1.Workspace) bool { return ws.Status.CurrentRun != nil })

	f.stopController()
	ws := f.get("adopt")
	patch := client.MergeFrom(ws.DeepCopy())
	ws.Status.CurrentRun, ws.Status.Runs = nil, 0
	require.NoError(t, env.Client.Status().Patch(context.Background(), ws, patch), "forgetting the run")
	newer := f.publish("a newer revision")
	f.startController()

	ws = f.waitWorkspace("adopt", "adopts the run", func(ws *magosv1.Workspace) bool { return ws.Status.CurrentRun != nil })
	assert.Equal(t, job.Name, ws.Status.CurrentRun.Job, "the Job that exists is the run")
	assert.Equal(t, magosv1.PhasePlanning, ws.Status.Phase)
	assert.Len(t, runJobs(t, f.ns, "adopt"), 1, "no second Job")

	complete(t, job, magosv1.RunResult{PlanDigest: "sha256:0000", Storage: "plan"})
	next := waitJob(t, f.ns, "adopt", magosv1.RunPlan)
	assert.NotEqual(t, job.Name, next.Name, "a new runjob.Run, not the adopted one again")
	assert.Equal(t, newer, jobEnv(next, magosv1.EnvRevision), "the newer revision is planned after the adopted run")
	ws = f.waitWorkspace("adopt", "plans the newer revision", running(next.Name))
	require.NotEmpty(t, ws.Status.History)
	assert.Equal(t, job.Name, ws.Status.History[0].Job, "the adopted run is recorded")
	assert.Equal(t, magosv1.ResultSucceeded, ws.Status.History[0].Result)
}
