package runjob

import (
	"encoding/json"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Report is what a finished run's Job and Pods say of it (ReadReport).
type Report struct {
	// Result is the runner's report, checked, or one built from the Job's
	// status when there is none.
	Result magosv1.RunResult
	// Pod is the Pod that reported, else the last of the Job's Pods that
	// ended (nil: none), which says whether the run was stopped from
	// outside.
	Pod *corev1.Pod
	// Mismatch says how the reporting runner's version differs from the
	// controller's (CheckRunnerVersion); empty when it does not.
	Mismatch string
}

// ReadReport reads the runner's report on a run of phase from the
// termination message of its Job's Pods (pods, listed by the Job's
// job-name label). A nil job is one a live read found gone: its Pod's
// report is still read if the Pod is left (a Job deleted while its Pod
// stopped), else the run failed with JobMissing. A run without a report
// (killed, deadline) gets one built from the Job's status.
//
// Reports are untrusted, as the runner runs the Workspace's code:
//   - only Pods the Job controls (a controller owner reference with this
//     Job's UID, as the job controller sets it) count: a Pod that merely
//     carries the Job's job-name label does not report for it;
//   - a report of success counts only from a Job that succeeded or a Pod
//     of the Job that did (which the kubelet alone writes);
//   - a report from a runner of another run contract is not trusted, and
//     one of another version is recorded as such (CheckRunnerVersion).
func ReadReport(job *batchv1.Job, pods []corev1.Pod, phase, controllerVersion string) Report {
	succeeded := false
	if job != nil {
		_, succeeded = Finished(job)
	}
	var ended *corev1.Pod
	for i := range pods {
		p := &pods[i]
		if job != nil && !metav1.IsControlledBy(p, job) {
			continue
		}
		if PodEnded(p) {
			ended = p
		}
		for _, cs := range p.Status.ContainerStatuses {
			t := cs.State.Terminated
			if t == nil || t.Message == "" {
				continue
			}
			var res magosv1.RunResult
			if err := json.Unmarshal([]byte(t.Message), &res); err != nil || res.Result == "" {
				continue
			}
			res, mismatch := CheckRunnerVersion(res.Sanitized(), controllerVersion)
			if job != nil && !succeeded && p.Status.Phase != corev1.PodSucceeded && res.Result == magosv1.ResultSucceeded {
				res.Result = magosv1.ResultFailed
			}
			return Report{Result: res, Pod: p, Mismatch: mismatch}
		}
	}
	switch {
	case job == nil:
		return Report{Result: magosv1.RunResult{Phase: phase, Result: magosv1.ResultFailed, Reason: magosv1.ReasonJobMissing,
			Message: "the run's Job disappeared before its result was read"}, Pod: ended}
	case succeeded:
		return Report{Result: magosv1.RunResult{Phase: phase, Result: magosv1.ResultFailed, Reason: magosv1.ReasonNoReport,
			Message: "the runner exited without a report"}, Pod: ended}
	}
	return Report{Result: magosv1.RunResult{Phase: phase, Result: magosv1.ResultFailed, Reason: magosv1.ReasonRunFailed,
		Message: RunnerEnd(ended) + FailureMessage(job)}, Pod: ended}
}

// PodEnded reports whether pod ended: it succeeded or failed.
func PodEnded(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
