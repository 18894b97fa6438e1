package executor

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Job condition reasons and messages, as the job controller writes them.
const (
	ReasonBackoffLimitExceeded = "BackoffLimitExceeded"
	ReasonCompletionsReached   = "CompletionsReached"

	messageBackoffLimitExceeded = "Job has reached the specified backoff limit"
	messageDeadlineExceeded     = "Job was active longer than specified deadline"
	messageCompletionsReached   = "Reached expected number of succeeded pods"
)

// jobFinished returns the Job's Complete or Failed condition, if True.
func jobFinished(job *batchv1.Job) *batchv1.JobCondition {
	for i, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// jobCondition returns the Job condition of type t, if True.
func jobCondition(st *batchv1.JobStatus, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i, c := range st.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return &st.Conditions[i]
		}
	}
	return nil
}

// deadlineLeft is the time left before the Job's activeDeadlineSeconds;
// ok is false when the Job has no deadline or has not started.
func deadlineLeft(job *batchv1.Job, start *metav1.Time, now time.Time) (left time.Duration, ok bool) {
	if job.Spec.ActiveDeadlineSeconds == nil || start == nil {
		return 0, false
	}
	deadline := start.Add(time.Duration(*job.Spec.ActiveDeadlineSeconds) * time.Second)
	return deadline.Sub(now), true
}

// computeJobStatus is the status the job controller gives a Job with one
// completion and no retries (backoffLimit 0 semantics, whatever the spec
// says), given its Pods: the first failed Pod or the deadline fails the Job,
// the first succeeded Pod completes it. Counters never decrease, so Pods
// that were counted may be gone. A finished Job's status is returned as it
// is.
func computeJobStatus(job *batchv1.Job, pods []corev1.Pod, now metav1.Time) batchv1.JobStatus {
	st := *job.Status.DeepCopy()
	if jobFinished(job) != nil {
		return st
	}
	if st.StartTime == nil {
		st.StartTime = &now
	}
	var active, terminating, ready, succeeded, failed int32
	for i := range pods {
		p := &pods[i]
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			succeeded++
		case p.Status.Phase == corev1.PodFailed:
			failed++
		case p.DeletionTimestamp != nil:
			terminating++
		default:
			active++
			if isPodReady(p) {
				ready++
			}
		}
	}
	st.Active, st.Ready, st.Terminating = active, &ready, &terminating
	st.Succeeded = max(st.Succeeded, succeeded)
	st.Failed = max(st.Failed, failed)
	if st.UncountedTerminatedPods == nil {
		st.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}

	if jobCondition(&st, batchv1.JobFailureTarget) == nil && jobCondition(&st, batchv1.JobSuccessCriteriaMet) == nil {
		left, hasDeadline := deadlineLeft(job, st.StartTime, now.Time)
		switch {
		case hasDeadline && left <= 0:
			st.Conditions = append(st.Conditions, jobCond(batchv1.JobFailureTarget, ReasonDeadlineExceeded, messageDeadlineExceeded, now))
		case st.Failed > 0:
			st.Conditions = append(st.Conditions, jobCond(batchv1.JobFailureTarget, ReasonBackoffLimitExceeded, messageBackoffLimitExceeded, now))
		case st.Succeeded > 0:
			st.Conditions = append(st.Conditions, jobCond(batchv1.JobSuccessCriteriaMet, ReasonCompletionsReached, messageCompletionsReached, now))
		}
	}
	if active > 0 || terminating > 0 {
		return st
	}
	if target := jobCondition(&st, batchv1.JobFailureTarget); target != nil {
		st.Conditions = append(st.Conditions, jobCond(batchv1.JobFailed, target.Reason, target.Message, now))
	} else if met := jobCondition(&st, batchv1.JobSuccessCriteriaMet); met != nil {
		st.Conditions = append(st.Conditions, jobCond(batchv1.JobComplete, met.Reason, met.Message, now))
		st.CompletionTime = &now
	}
	return st
}

func jobCond(t batchv1.JobConditionType, reason, message string, now metav1.Time) batchv1.JobCondition {
	return batchv1.JobCondition{
		Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message,
		LastProbeTime: now, LastTransitionTime: now,
	}
}
