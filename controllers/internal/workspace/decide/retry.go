package decide

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// What follows a failed run (RunMetrics.RetryOutcome), the outcome label of
// magos_workspace_retries_total.
const (
	// RetryScheduled: a retry is scheduled (status.retry.nextTime).
	RetryScheduled = "retried"
	// RetryStalled: the run failed with a reason no retry fixes.
	RetryStalled = "stalled"
	// RetryExhausted: spec.retry.maxAttempts failures in a row.
	RetryExhausted = "exhausted"
)

// RetryPolicy is a Workspace's effective spec.retry.
type RetryPolicy struct {
	// Interval is the wait before the first retry; each further failure
	// doubles it, up to MaxInterval (16 × Interval unless set).
	Interval, MaxInterval time.Duration
	// MaxAttempts bounds the failed runs in a row; 0 is no bound.
	MaxAttempts int32
}

// With is p with the fields spec sets.
func (p RetryPolicy) With(spec *magosv1.RetrySpec) RetryPolicy {
	if spec == nil {
		return p
	}
	if spec.Interval != nil {
		p.Interval = spec.Interval.Duration
	}
	if spec.MaxInterval != nil {
		p.MaxInterval = spec.MaxInterval.Duration
	}
	if spec.MaxAttempts != nil {
		p.MaxAttempts = *spec.MaxAttempts
	}
	return p
}

// Wait is how long to wait after the attempts-th failure in a row.
func (p RetryPolicy) Wait(attempts int32) time.Duration {
	ceiling := p.MaxInterval
	if ceiling <= 0 {
		ceiling = 16 * p.Interval
	}
	w := p.Interval
	for i := int32(1); i < attempts && w < ceiling; i++ {
		w *= 2
	}
	return min(w, ceiling)
}

// exhausted says whether attempts failures in a row use up the attempts.
func (p RetryPolicy) exhausted(attempts int32) bool {
	return p.MaxAttempts > 0 && attempts >= p.MaxAttempts
}

// nextRetry is the retry state after run cr finished, given the state
// before (prev) and the newest run before it (last): none unless cr failed;
// else one more attempt for the same revision and inputs, due after the
// policy's backoff, or never for a failure that stalls or once the attempts
// are used up. A deletion's runs are always retried.
func nextRetry(prev *magosv1.RetryStatus, last, cr *magosv1.RunStatus, p RetryPolicy) *magosv1.RetryStatus {
	if cr.Result != magosv1.ResultFailed {
		return nil
	}
	rs := &magosv1.RetryStatus{Attempts: 1}
	if prev != nil && last != nil && last.Revision == cr.Revision && last.InputsDigest == cr.InputsDigest {
		rs.Attempts = prev.Attempts + 1
	}
	if !deletionRun(cr) && (stalls(OrDefault(cr.Reason, magosv1.ReasonRunFailed)) || p.exhausted(rs.Attempts)) {
		return rs
	}
	next := metav1.NewTime(cr.Finished.Add(p.Wait(rs.Attempts)))
	rs.NextTime = &next
	return rs
}

// retryOutcome names what follows a failed run with retry state rs, for
// magos_workspace_retries_total.
func retryOutcome(rs *magosv1.RetryStatus, reason string) string {
	switch {
	case rs.NextTime != nil:
		return RetryScheduled
	case stalls(OrDefault(reason, magosv1.ReasonRunFailed)):
		return RetryStalled
	}
	return RetryExhausted
}
