package runjob

import (
	"testing"

	"github.com/stretchr/testify/assert"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestCheckRunnerVersion: a report from a runner of another major version
// of the run contract, or of none (a runner from before the contract was
// reported), is not trusted: the run failed with RunnerVersionMismatch,
// and nothing else of the report is kept. A runner of the same contract
// but another version is trusted, and the mismatch is recorded.
func TestCheckRunnerVersion(t *testing.T) {
	plan := magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultSucceeded, Reason: magosv1.ReasonSucceeded,
		PlanDigest: "sha256:abc", Add: 1, HasChanges: true, Outputs: []string{"x"}, LockHolder: "someone"}
	with := func(contract int, version string) magosv1.RunResult {
		r := plan
		r.Contract, r.RunnerVersion = contract, version
		return r
	}
	for _, tt := range []struct {
		name              string
		res               magosv1.RunResult
		controller        string
		trusted, mismatch bool
	}{
		{"the same contract and version", with(magosv1.RunContractMajor, "0.1.0"), "0.1.0", true, false},
		{"dev builds of one tree", with(magosv1.RunContractMajor, "dev"), "dev", true, false},
		{"the same contract, another version", with(magosv1.RunContractMajor, "0.0.9"), "0.1.0", true, true},
		{"the same contract, no version", with(magosv1.RunContractMajor, ""), "0.1.0", true, true},
		{"no contract: a runner from before it was reported", with(0, ""), "0.1.0", false, true},
		{"an older contract", with(magosv1.RunContractMajor-1, "0.0.1"), "0.1.0", false, true},
		{"a newer contract", with(magosv1.RunContractMajor+1, "9.0.0"), "0.1.0", false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, mismatch := CheckRunnerVersion(tt.res, tt.controller)
			assert.Equal(t, tt.mismatch, mismatch != "", "mismatch: %q", mismatch)
			if tt.trusted {
				want := tt.res
				if tt.mismatch {
					want.Message = mismatch
				}
				assert.Equal(t, want, got, "the report stands")
				return
			}
			assert.Equal(t, magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultFailed, Reason: magosv1.ReasonRunnerVersionMismatch,
				Message: mismatch, Contract: tt.res.Contract, RunnerVersion: tt.res.RunnerVersion}, got, "nothing of the report is kept")
			assert.Contains(t, mismatch, "run contract")
		})
	}
	failed := with(magosv1.RunContractMajor, "0.0.9")
	failed.Result, failed.Reason, failed.Message = magosv1.ResultFailed, magosv1.ReasonInitFailed, "init failed"
	got, mismatch := CheckRunnerVersion(failed, "0.1.0")
	assert.Equal(t, "init failed; "+mismatch, got.Message, "the runner's message comes first")
}
