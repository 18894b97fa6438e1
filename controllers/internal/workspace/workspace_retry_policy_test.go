package workspace_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// spec.retry: each failure in a row waits twice as long as the one before,
// status.retry shows the attempts and the next time, and after maxAttempts
// failures the Workspace stalls (RetriesExhausted, kstatus Failed) and
// starts nothing until a reconcile request, which plans at once and is
// recorded in status.lastHandledReconcileAt.
func TestRetriesBackOffAndStopAtMaxAttempts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Hour) // the controller's default is not used
	f.newWorkspace("flaky", func(ws *magosv1.Workspace) {
		ws.Spec.Retry = &magosv1.RetrySpec{Interval: &metav1.Duration{Duration: time.Second}, MaxAttempts: ptr.To[int32](3)}
	})
	fails := func(job *batchv1.Job) {
		report(t, job, magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonInitFailed, Message: "registry unreachable"})
	}

	first := waitJob(t, f.ns, "flaky", magosv1.RunPlan)
	fails(first)
	ws := f.waitWorkspace("flaky", "waits for its first retry", func(ws *magosv1.Workspace) bool { return ws.Status.Retry != nil && ws.Status.Retry.Attempts == 1 })
	require.NotNil(t, ws.Status.Retry.NextTime)
	assert.Equal(t, ws.Status.History[0].Finished.Add(time.Second), ws.Status.Retry.NextTime.Time, "the first retry waits the interval")

	second := waitJob(t, f.ns, "flaky", magosv1.RunPlan)
	fails(second)
	ws = f.waitWorkspace("flaky", "waits for its second retry", func(ws *magosv1.Workspace) bool { return ws.Status.Retry != nil && ws.Status.Retry.Attempts == 2 })
	assert.Equal(t, ws.Status.History[0].Finished.Add(2*time.Second), ws.Status.Retry.NextTime.Time, "the second waits twice the interval")
	assertReadiness(t, ws, readiness{Ready: "False/" + magosv1.ReasonInitFailed, Reconciling: "True/" + magosv1.ProgressingWithRetryReason, Kstatus: status.InProgressStatus})

	third := waitJob(t, f.ns, "flaky", magosv1.RunPlan)
	assert.False(t, third.CreationTimestamp.Time.Before(ws.Status.History[0].Finished.Add(time.Second)), "the backoff was waited out")
	fails(third)
	ws = f.waitWorkspace("flaky", "has no attempts left", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseFailed && ws.Status.Retry != nil && ws.Status.Retry.Attempts == 3
	})
	assert.Nil(t, ws.Status.Retry.NextTime)
	assertReadiness(t, ws, readiness{Ready: "False/" + magosv1.ReasonRetriesExhausted, Stalled: "True/" + magosv1.ReasonRetriesExhausted, Kstatus: status.FailedStatus})
	assert.Contains(t, readyMessage(ws), "kubectl magos retry flaky")
	assert.Never(t, func() bool { return len(runJobs(t, f.ns, "flaky")) > 3 }, 5*time.Second, 100*time.Millisecond, "no fourth run starts")

	requested := time.Now().Format(time.RFC3339Nano)
	f.update("flaky", func(ws *magosv1.Workspace) {
		ws.Annotations = map[string]string{magosv1.ReconcileRequestAnnotation: requested}
	})
	fourth := waitJob(t, f.ns, "flaky", magosv1.RunPlan)
	assert.NotEqual(t, third.Name, fourth.Name)
	f.waitWorkspace("flaky", "records the request", func(ws *magosv1.Workspace) bool { return ws.Status.LastHandledReconcileAt == requested })
	complete(t, fourth, planWithoutChanges)
	ws = f.waitWorkspace("flaky", "is applied", inPhase(magosv1.PhaseIdle))
	assert.Nil(t, ws.Status.Retry, "a success clears the retry state")
}

// planWithoutChanges is a plan run's report of a plan with nothing to do.
var planWithoutChanges = magosv1.RunResult{PlanDigest: "sha256:0e0e", Storage: "plan"}

// A reconcile request plans again at once, also when the revision and
// inputs are unchanged and the Workspace is applied; the same value again
// does nothing.
func TestReconcileRequestPlansAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Hour)
	f.newWorkspace("again", nil)
	complete(t, waitJob(t, f.ns, "again", magosv1.RunPlan), planWithoutChanges)
	f.waitWorkspace("again", "is applied", inPhase(magosv1.PhaseIdle))
	require.Len(t, runJobs(t, f.ns, "again"), 1)

	f.update("again", func(ws *magosv1.Workspace) {
		ws.Annotations = map[string]string{magosv1.ReconcileRequestAnnotation: "2026-12-01T12:00:00Z"}
	})
	second := waitJob(t, f.ns, "again", magosv1.RunPlan)
	f.waitWorkspace("again", "records the request", func(ws *magosv1.Workspace) bool { return ws.Status.LastHandledReconcileAt == "2026-12-01T12:00:00Z" })
	complete(t, second, planWithoutChanges)
	f.waitWorkspace("again", "is applied again", inPhase(magosv1.PhaseIdle))

	f.update("again", func(ws *magosv1.Workspace) { ws.Labels = map[string]string{"touched": "yes"} })
	assert.Never(t, func() bool { return len(runJobs(t, f.ns, "again")) > 2 }, 3*time.Second, 100*time.Millisecond, "a handled request is not handled again")
}
