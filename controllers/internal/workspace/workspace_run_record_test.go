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

// A run's start records what the artifact proxy binds a run to: the UID of
// the Job the controller created and the artifact it was started on. A
// Job adopted after its start was lost from status has no UID recorded
// (nothing tells it from a Job someone else created), and history keeps
// none of it.
func TestARunRecordsItsJobUIDAndArtifact(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	f.newWorkspace("record", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	job := waitJob(t, f.ns, "record", magosv1.RunPlan)
	ws := f.waitWorkspace("record", "plans", running(job.Name))
	cr := ws.Status.CurrentRun
	assert.Equal(t, job.UID, cr.JobUID, "the UID of the Job the controller created")
	require.NotNil(t, ws.Status.Source)
	assert.Equal(t, ws.Status.Source.URL, cr.ArtifactURL, "the artifact the run was started on")
	assert.Equal(t, ws.Status.Source.Digest, cr.ArtifactDigest)
	a := magosv1.ParseRunAnnotations(job.Annotations)
	assert.Equal(t, a.ArtifactURL, cr.ArtifactURL, "the Job names the same artifact")
	assert.Equal(t, a.ArtifactDigest, cr.ArtifactDigest)

	f.stopController()
	ws = f.get("record")
	patch := client.MergeFrom(ws.DeepCopy())
	ws.Status.CurrentRun, ws.Status.Runs = nil, 0
	require.NoError(t, env.Client.Status().Patch(context.Background(), ws, patch), "forgetting the run")
	f.startController()
	ws = f.waitWorkspace("record", "adopts the run", running(job.Name))
	assert.Empty(t, ws.Status.CurrentRun.JobUID, "an adopted Job is not vouched for")
	assert.Equal(t, a.ArtifactURL, ws.Status.CurrentRun.ArtifactURL, "its artifact is read from the Job")

	complete(t, job, magosv1.RunResult{PlanDigest: "sha256:0000", Storage: "plan"})
	ws = f.waitWorkspace("record", "records the plan", func(ws *magosv1.Workspace) bool { return len(ws.Status.History) > 0 })
	h := ws.Status.History[0]
	assert.Equal(t, job.Name, h.Job)
	assert.Empty(t, h.JobUID, "history keeps no UID")
	assert.Empty(t, h.ArtifactURL, "history keeps no artifact")
	assert.Empty(t, h.ArtifactDigest)
}
