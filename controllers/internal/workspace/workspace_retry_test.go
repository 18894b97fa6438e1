package workspace_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// A run failure that a retry may fix is retried after the retry interval:
// meanwhile the Workspace is Failed, Reconciling with ProgressingWithRetry
// (kstatus InProgress, never Stalled), and Ready carries the failure's
// reason.
func TestRetriedFailurePlansAgainAfterTheRetryInterval(t *testing.T) {
	t.Parallel()
	const retry = 2 * time.Second
	tests := []struct {
		name   string
		end    func(t testing.TB, job *batchv1.Job)
		reason string
	}{
		{
			name: "the runner reports InitFailed",
			end: func(t testing.TB, job *batchv1.Job) {
				report(t, job, magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonInitFailed, Message: "registry unreachable"})
			},
			reason: magosv1.ReasonInitFailed,
		},
		{
			name:   "the Job fails without a report",
			end:    func(t testing.TB, job *batchv1.Job) { fail(t, job, deadlineExceededReason, deadlineExceededMessage) },
			reason: magosv1.ReasonRunFailed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, retry)
			f.newWorkspace("retried", nil)
			first := waitJob(t, f.ns, "retried", magosv1.RunPlan)
			tt.end(t, first)

			ws := f.waitWorkspace("retried", "waits to retry", inPhase(magosv1.PhaseFailed))
			assertReadiness(t, ws, readiness{
				Ready: "False/" + tt.reason, Reconciling: "True/" + magosv1.ProgressingWithRetryReason, Kstatus: status.InProgressStatus,
			})
			require.NotEmpty(t, ws.Status.History)
			failed := ws.Status.History[0]
			assert.Equal(t, first.Name, failed.Job)
			assert.Equal(t, tt.reason, failed.Reason)
			require.NotNil(t, failed.Finished)

			second := waitJob(t, f.ns, "retried", magosv1.RunPlan)
			assert.NotEqual(t, first.Name, second.Name, "a new run")
			// Timestamps have whole seconds: allow one.
			assert.False(t, second.CreationTimestamp.Time.Before(failed.Finished.Add(retry-time.Second)),
				"the retry waited the retry interval: failed at %s, retried at %s", failed.Finished, second.CreationTimestamp)
			f.waitWorkspace("retried", "plans again", inPhase(magosv1.PhasePlanning))
			assert.Equal(t, f.Revision, jobEnv(second, magosv1.EnvRevision))
		})
	}
}

// A failure no retry fixes stalls the Workspace: Stalled=True with the
// runner's reason (kstatus Failed), and no run starts over several retry
// intervals, nor is the status rewritten; a new source revision plans
// again.
func TestStallingFailureStartsNoRunUntilTheRevisionChanges(t *testing.T) {
	t.Parallel()
	const retry = time.Second
	for _, reason := range []string{magosv1.ReasonEngineNotFound, magosv1.ReasonArtifactRejected, magosv1.ReasonPathNotFound} {
		t.Run(reason, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, retry)
			f.newWorkspace("stalled", nil)
			first := waitJob(t, f.ns, "stalled", magosv1.RunPlan)
			report(t, first, magosv1.RunResult{Result: magosv1.ResultFailed, Reason: reason, Message: "cannot run this revision"})

			ws := f.waitWorkspace("stalled", "stalls", inPhase(magosv1.PhaseFailed))
			assertReadiness(t, ws, readiness{Ready: "False/" + reason, Stalled: "True/" + reason, Kstatus: status.FailedStatus})
			assert.Contains(t, readyMessage(ws), "cannot run this revision")
			settled := ws.ResourceVersion
			assert.Never(t, func() bool {
				return len(runJobs(t, f.ns, "stalled")) > 1 || f.get("stalled").ResourceVersion != settled
			}, 4*retry, 100*time.Millisecond, "no run starts and the status stays as it is")

			rev := f.publish("a fixed revision")
			second := waitJob(t, f.ns, "stalled", magosv1.RunPlan)
			assert.Equal(t, rev, jobEnv(second, magosv1.EnvRevision), "the new revision is planned")
			ws = f.waitWorkspace("stalled", "plans the new revision", inPhase(magosv1.PhasePlanning))
			assertReadiness(t, ws, readiness{Ready: "False/" + magosv1.ReasonPlanning, Reconciling: "True/" + magosv1.ReasonPlanning, Kstatus: status.InProgressStatus})
		})
	}
}
