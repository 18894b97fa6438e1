package runjob

import (
	"fmt"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// CheckRunnerVersion compares a runner's report with this controller (of
// build version controllerVersion). A runner of another major version of
// the run contract, or of none (a runner from before the contract was
// reported: an old image the allow-list admits), may lack checks the
// controller relies on, the apply-time proof among them: its report is
// not trusted, and the run failed with RunnerVersionMismatch, nothing of
// the report kept but who sent it. A runner of the same contract but
// another build version is trusted; mismatch then says so, appended to
// the run's message, for the caller to record as a Warning event. It is
// pure.
func CheckRunnerVersion(res magosv1.RunResult, controllerVersion string) (checked magosv1.RunResult, mismatch string) {
	runner := res.RunnerVersion
	if runner == "" {
		runner = "unknown"
	}
	if res.Contract != magosv1.RunContractMajor {
		mismatch = fmt.Sprintf("the runner (version %s) speaks run contract %d, this controller (version %s) run contract %d: its report is not trusted; run the runner image of the controller's release",
			runner, res.Contract, controllerVersion, magosv1.RunContractMajor)
		return magosv1.RunResult{Phase: res.Phase, Result: magosv1.ResultFailed, Reason: magosv1.ReasonRunnerVersionMismatch, Message: mismatch,
			Contract: res.Contract, RunnerVersion: res.RunnerVersion}, mismatch
	}
	if res.RunnerVersion == controllerVersion {
		return res, ""
	}
	mismatch = fmt.Sprintf("the runner is version %s, this controller %s", runner, controllerVersion)
	if res.Message == "" {
		res.Message = mismatch
	} else {
		res.Message += "; " + mismatch
	}
	return res, mismatch
}
