package v1alpha1

import "testing"

func TestRunResultSanitized(t *testing.T) {
	for _, tc := range []struct {
		name           string
		in             RunResult
		result, reason string
	}{
		{"a known failure", RunResult{Result: ResultFailed, Reason: ReasonApplyFailed}, ResultFailed, ReasonApplyFailed},
		{"a stale plan", RunResult{Result: ResultStale, Reason: ReasonPlanStorageExhausted}, ResultStale, ReasonPlanStorageExhausted},
		{"a success without a reason", RunResult{Result: ResultSucceeded}, ResultSucceeded, ReasonSucceeded},
		{"a success with another reason", RunResult{Result: ResultSucceeded, Reason: ReasonStateNotSaved}, ResultSucceeded, ReasonSucceeded},
		{"an invented reason", RunResult{Result: ResultFailed, Reason: "PolicyPassed"}, ResultFailed, ReasonRunFailed},
		{"a failure claiming success", RunResult{Result: ResultFailed, Reason: ReasonSucceeded}, ResultFailed, ReasonRunFailed},
		{"an invented result", RunResult{Result: "Approved", Reason: ReasonPlanFailed}, ResultFailed, ReasonPlanFailed},
		{"a running result", RunResult{Result: ResultRunning}, ResultFailed, ReasonRunFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.Sanitized()
			if got.Result != tc.result || got.Reason != tc.reason {
				t.Errorf("got %s/%s, want %s/%s", got.Result, got.Reason, tc.result, tc.reason)
			}
		})
	}
}
