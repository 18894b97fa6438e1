package runjob

import (
	"testing"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestFailureReason(t *testing.T) {
	failedJob := func(reason string) *batchv1.Job {
		return &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: reason},
		}}}
	}
	terminated := func(reason string) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "runner", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: 137}}},
		}}}
	}
	disrupted := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Conditions: []corev1.PodCondition{
		{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler},
	}}}
	canceled := magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonCanceled}
	tests := []struct {
		name string
		res  magosv1.RunResult
		job  *batchv1.Job
		pod  *corev1.Pod
		want string
	}{
		{"the runner's reason", magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonPlanFailed}, failedJob("PodFailurePolicy"), terminated("Error"), magosv1.ReasonPlanFailed},
		{"artifact rejected", magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonArtifactRejected}, nil, nil, magosv1.ReasonArtifactRejected},
		{"a held lock", magosv1.RunResult{Result: magosv1.ResultLocked, Reason: magosv1.ReasonStateLocked}, nil, nil, magosv1.ReasonStateLocked},
		{"an image that cannot be pulled", magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonImagePullFailed}, nil, nil, magosv1.ReasonImagePullFailed},
		{"the deadline, though the runner reported Canceled", canceled, failedJob(batchv1.JobReasonDeadlineExceeded), terminated("Error"), magosv1.ReasonDeadlineExceeded},
		{"the deadline, without a report", magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonRunFailed}, failedJob(batchv1.JobReasonDeadlineExceeded), nil, magosv1.ReasonDeadlineExceeded},
		{"out of memory", magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonRunFailed}, failedJob("PodFailurePolicy"), terminated(magosv1.ReasonOOMKilled), magosv1.ReasonOOMKilled},
		{"disrupted, though the runner reported Canceled", canceled, failedJob("PodFailurePolicy"), disrupted, magosv1.ReasonEvicted},
		{"evicted by the kubelet", canceled, nil, &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}}, magosv1.ReasonEvicted},
		{"a reason outside the closed set", magosv1.RunResult{Result: magosv1.ResultFailed, Reason: "NoReport"}, nil, nil, magosv1.ReasonRunFailed},
		{"a Job gone before its result was read", magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonJobMissing}, nil, nil, magosv1.ReasonRunFailed},
		{"no reason at all", magosv1.RunResult{Result: magosv1.ResultFailed}, nil, nil, magosv1.ReasonRunFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, FailureReason(tt.res, tt.job, tt.pod))
		})
	}
}

// TestRunnerEnd: a run that ended without a report says how its runner
// container ended, a kill apart.
func TestRunnerEnd(t *testing.T) {
	pod := func(t *corev1.ContainerStateTerminated) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "runner", State: corev1.ContainerState{Terminated: t}}}}}
	}
	assert.Equal(t, "", RunnerEnd(nil))
	assert.Equal(t, "the runner was killed (Error, exit code 137) before it could report; ", RunnerEnd(pod(&corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137})))
	assert.Equal(t, "the runner ended (Error, exit code 3) without a report; ", RunnerEnd(pod(&corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 3})))
}

func TestOutOfMemoryNamesTheLimit(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: RunnerContainer, Resources: corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}}}}}}
	res := OutOfMemory(magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonApplyFailed, Message: "local-exec provisioner error"}, pod)
	assert.Equal(t, magosv1.ReasonOOMKilled, res.Reason, "what stopped the Run, not what the runner saw of it")
	assert.Equal(t, "the runner ran out of memory: the kernel stopped it at its memory limit of 256Mi (raise spec.runner.resources.limits.memory); local-exec provisioner error", res.Message)
	assert.Contains(t, OutOfMemory(magosv1.RunResult{Reason: magosv1.ReasonRunFailed}, nil).Message, "at its memory limit (raise")
}
