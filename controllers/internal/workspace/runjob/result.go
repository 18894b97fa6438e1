package runjob

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// runnerFailureReasons are the RunResult reasons the runner reports for a
// run that did not succeed, and the controller's ImagePullFailed,
// RunStartFailed and RunnerVersionMismatch.
var runnerFailureReasons = map[string]bool{
	magosv1.ReasonInvalidConfig: true, magosv1.ReasonKubernetesClient: true,
	magosv1.ReasonArtifactFetchFailed: true, magosv1.ReasonArtifactDigestMismatch: true, magosv1.ReasonArtifactRejected: true,
	magosv1.ReasonPathNotFound: true, magosv1.ReasonEngineNotFound: true, magosv1.ReasonBackendFailed: true,
	magosv1.ReasonInitFailed: true, magosv1.ReasonPlanFailed: true, magosv1.ReasonPlanStoreFailed: true,
	magosv1.ReasonPlanNotFound: true, magosv1.ReasonPlanCorrupt: true, magosv1.ReasonPlanDigestMismatch: true,
	magosv1.ReasonPlanBinaryMismatch: true, magosv1.ReasonPlanStale: true, magosv1.ReasonApplyFailed: true,
	magosv1.ReasonDestroyFailed: true, magosv1.ReasonOutputsFailed: true, magosv1.ReasonStateLocked: true,
	magosv1.ReasonCanceled: true, magosv1.ReasonRunFailed: true, magosv1.ReasonStateNotSaved: true,
	magosv1.ReasonStateTooLarge: true, magosv1.ReasonPlanStorageExhausted: true,
	magosv1.ReasonImagePullFailed: true, magosv1.ReasonRunStartFailed: true, magosv1.ReasonRunnerVersionMismatch: true,
}

// FailureReason is the reason label of a failed run: what stopped it from
// outside, read from its Job and Pod (DeadlineExceeded, OOMKilled, Evicted),
// else the reason of its RunResult if it is one of the closed set, else
// RunFailed. job and pod may be nil (gone, or never read).
func FailureReason(res magosv1.RunResult, job *batchv1.Job, pod *corev1.Pod) string {
	if job != nil {
		for _, c := range job.Status.Conditions {
			if (c.Type == batchv1.JobFailed || c.Type == batchv1.JobFailureTarget) && c.Status == corev1.ConditionTrue && c.Reason == batchv1.JobReasonDeadlineExceeded {
				return magosv1.ReasonDeadlineExceeded
			}
		}
	}
	if pod != nil {
		for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
			if t := cs.State.Terminated; t != nil && t.Reason == magosv1.ReasonOOMKilled {
				return magosv1.ReasonOOMKilled
			}
		}
		if pod.Status.Reason == magosv1.ReasonEvicted {
			return magosv1.ReasonEvicted
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
				return magosv1.ReasonEvicted
			}
		}
	}
	if runnerFailureReasons[res.Reason] {
		return res.Reason
	}
	return magosv1.ReasonRunFailed
}

// OutOfMemory is res of a run whose container the kernel killed for its
// memory, whatever the runner managed to report: the reason is OOMKilled
// and the message names the limit to raise.
func OutOfMemory(res magosv1.RunResult, pod *corev1.Pod) magosv1.RunResult {
	limit := "its memory limit"
	if pod != nil {
		for _, c := range pod.Spec.Containers {
			if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && c.Name == RunnerContainer {
				limit = "its memory limit of " + q.String()
			}
		}
	}
	res.Reason = magosv1.ReasonOOMKilled
	res.Message = fmt.Sprintf("the runner ran out of memory: the kernel stopped it at %s (raise spec.runner.resources.limits.memory); %s", limit, res.Message)
	return res
}

// RunnerEnd says how the runner container of pod (nil: not read) ended
// without a report, e.g. "the runner was killed (signal 9, exit code 137);
// ", or "".
func RunnerEnd(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	for _, cs := range pod.Status.ContainerStatuses {
		t := cs.State.Terminated
		if cs.Name != RunnerContainer || t == nil {
			continue
		}
		how := fmt.Sprintf("exit code %d", t.ExitCode)
		if t.Signal != 0 {
			how = fmt.Sprintf("signal %d, %s", t.Signal, how)
		}
		if t.ExitCode == 137 || t.Signal == 9 {
			return fmt.Sprintf("the runner was killed (%s, %s) before it could report; ", t.Reason, how)
		}
		return fmt.Sprintf("the runner ended (%s, %s) without a report; ", t.Reason, how)
	}
	return ""
}

// Finished reports whether job finished and whether it succeeded.
func Finished(job *batchv1.Job) (done, succeeded bool) {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, true
		case batchv1.JobFailed:
			return true, false
		}
	}
	return false, false
}

func FailureMessage(job *batchv1.Job) string {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return fmt.Sprintf("Job failed (%s): %s", c.Reason, c.Message)
		}
	}
	return "Job failed"
}
