package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestNextRetry pins the retry state after a run: none after a success,
// attempts counted per revision and inputs, no retry time for a stalling
// reason except in a deletion.
func TestNextRetry(t *testing.T) {
	finished := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	run := func(result, reason, rev string) *magosv1.RunStatus {
		return &magosv1.RunStatus{Phase: magosv1.RunPlan, Result: result, Reason: reason, Revision: rev, InputsDigest: "i", Finished: &finished}
	}
	prev := &magosv1.RetryStatus{Attempts: 2}

	assert.Nil(t, nextRetry(prev, run(magosv1.ResultFailed, "", "a"), run(magosv1.ResultSucceeded, "", "a"), RetryPolicy{Interval: time.Minute}), "a success clears it")
	assert.Nil(t, nextRetry(prev, nil, run(magosv1.ResultStale, magosv1.ReasonPlanStale, "a"), RetryPolicy{Interval: time.Minute}), "a stale plan is planned again at once")

	rs := nextRetry(prev, run(magosv1.ResultFailed, "", "a"), run(magosv1.ResultFailed, magosv1.ReasonInitFailed, "a"), RetryPolicy{Interval: time.Minute})
	assert.Equal(t, int32(3), rs.Attempts, "one more attempt for the same revision")
	assert.Equal(t, finished.Add(4*time.Minute), rs.NextTime.Time, "the third failure in a row waits four intervals")

	rs = nextRetry(prev, run(magosv1.ResultFailed, "", "a"), run(magosv1.ResultFailed, magosv1.ReasonInitFailed, "b"), RetryPolicy{Interval: time.Minute})
	assert.Equal(t, int32(1), rs.Attempts, "a new revision counts from one")

	rs = nextRetry(nil, nil, run(magosv1.ResultFailed, magosv1.ReasonEngineNotFound, "a"), RetryPolicy{Interval: time.Minute})
	assert.Nil(t, rs.NextTime, "a stalling reason is not retried")

	destroy := run(magosv1.ResultFailed, magosv1.ReasonEngineNotFound, "a")
	destroy.Phase, destroy.Mode = magosv1.RunApply, magosv1.PlanModeDestroy
	assert.NotNil(t, nextRetry(nil, nil, destroy, RetryPolicy{Interval: time.Minute}).NextTime, "a deletion's run is always retried")
}

// TestRetryBackoff pins spec.retry: the wait doubles per failure in a row
// up to the cap (16 × interval unless set), and maxAttempts failures in a
// row leave no retry time.
func TestRetryBackoff(t *testing.T) {
	p := RetryPolicy{Interval: 30 * time.Second}
	var got []time.Duration
	for a := int32(1); a <= 7; a++ {
		got = append(got, p.Wait(a))
	}
	assert.Equal(t, []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 8 * time.Minute, 8 * time.Minute}, got)
	assert.Equal(t, 5*time.Minute, RetryPolicy{Interval: 2 * time.Minute, MaxInterval: 5 * time.Minute}.Wait(3))

	layered := RetryPolicy{Interval: 30 * time.Second}.With(&magosv1.RetrySpec{MaxAttempts: ptrTo(int32(5))}).With(&magosv1.RetrySpec{Interval: &metav1.Duration{Duration: time.Minute}})
	assert.Equal(t, RetryPolicy{Interval: time.Minute, MaxAttempts: 5}, layered, "the Workspace's fields over the Project's over the controller's")

	finished := metav1.NewTime(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	failed := &magosv1.RunStatus{Phase: magosv1.RunApply, Result: magosv1.ResultFailed, Reason: magosv1.ReasonApplyFailed, Revision: "r", InputsDigest: "i", Finished: &finished}
	p = RetryPolicy{Interval: time.Minute, MaxAttempts: 3}
	rs := nextRetry(&magosv1.RetryStatus{Attempts: 1}, failed, failed, p)
	assert.Equal(t, finished.Add(2*time.Minute), rs.NextTime.Time, "the second failure waits twice the interval")
	rs = nextRetry(rs, failed, failed, p)
	assert.Equal(t, int32(3), rs.Attempts)
	assert.Nil(t, rs.NextTime, "the third failure uses up the attempts")
	assert.Equal(t, "exhausted", retryOutcome(rs, failed.Reason))
}
