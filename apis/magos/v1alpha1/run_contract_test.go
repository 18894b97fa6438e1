package v1alpha1

import (
	"encoding/json"
	"strings"
	"testing"
)

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

// TestRunResultRunnerVersion: the runner's contract and version travel in
// its report; a version too long or with other than printable ASCII reads
// "invalid".
func TestRunResultRunnerVersion(t *testing.T) {
	raw, err := json.Marshal(RunResult{Phase: RunPlan, Result: ResultSucceeded, Contract: RunContractMajor, RunnerVersion: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `"contract":1,"runnerVersion":"0.1.0"}`; !strings.HasSuffix(string(raw), want) {
		t.Errorf("got %s, want it to end with %s", raw, want)
	}
	for in, want := range map[string]string{
		"0.1.0": "0.1.0", "v1.2.3-rc.1+abc": "v1.2.3-rc.1+abc", "dev": "dev", "": "",
		strings.Repeat("9", 65): "invalid", "1.0\n": "invalid", "1.0 evil": "invalid", "\x1b[31m": "invalid", "é": "invalid",
	} {
		if got := (RunResult{Result: ResultSucceeded, RunnerVersion: in}).Sanitized().RunnerVersion; got != want {
			t.Errorf("runner version %q: got %q, want %q", in, got, want)
		}
	}
}
