package executor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestComputeJobStatus(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	started := metav1.NewTime(now.Add(-10 * time.Second))
	pod := func(phase corev1.PodPhase, ready bool) corev1.Pod {
		p := corev1.Pod{Status: corev1.PodStatus{Phase: phase}}
		if ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		return p
	}
	deleting := pod(corev1.PodRunning, true)
	deleting.DeletionTimestamp = &now
	type want struct {
		active, ready, succeeded, failed int32
		conditions                       []batchv1.JobConditionType
		reason                           string
		completed                        bool
	}
	tests := []struct {
		name     string
		deadline *int64
		status   batchv1.JobStatus
		pods     []corev1.Pod
		want     want
	}{{
		name: "new Job without Pods starts",
		want: want{},
	}, {
		name:   "running Pod is active and ready",
		status: batchv1.JobStatus{StartTime: &started},
		pods:   []corev1.Pod{pod(corev1.PodRunning, true)},
		want:   want{active: 1, ready: 1},
	}, {
		name:   "succeeded Pod completes the Job",
		status: batchv1.JobStatus{StartTime: &started, Active: 1},
		pods:   []corev1.Pod{pod(corev1.PodSucceeded, false)},
		want: want{succeeded: 1, completed: true, reason: ReasonCompletionsReached,
			conditions: []batchv1.JobConditionType{batchv1.JobSuccessCriteriaMet, batchv1.JobComplete}},
	}, {
		name:   "failed Pod fails the Job without retry",
		status: batchv1.JobStatus{StartTime: &started, Active: 1},
		pods:   []corev1.Pod{pod(corev1.PodFailed, false)},
		want: want{failed: 1, reason: ReasonBackoffLimitExceeded,
			conditions: []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobFailed}},
	}, {
		name:     "past the deadline a running Pod makes only the failure target",
		deadline: new(int64(5)),
		status:   batchv1.JobStatus{StartTime: &started, Active: 1},
		pods:     []corev1.Pod{pod(corev1.PodRunning, true)},
		want: want{active: 1, ready: 1, reason: ReasonDeadlineExceeded,
			conditions: []batchv1.JobConditionType{batchv1.JobFailureTarget}},
	}, {
		name:     "past the deadline the stopped Pod fails the Job for the deadline",
		deadline: new(int64(5)),
		status: batchv1.JobStatus{StartTime: &started, Active: 1, Conditions: []batchv1.JobCondition{
			jobCond(batchv1.JobFailureTarget, ReasonDeadlineExceeded, messageDeadlineExceeded, now),
		}},
		pods: []corev1.Pod{pod(corev1.PodFailed, false)},
		want: want{failed: 1, reason: ReasonDeadlineExceeded,
			conditions: []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobFailed}},
	}, {
		name:     "within the deadline nothing happens",
		deadline: new(int64(60)),
		status:   batchv1.JobStatus{StartTime: &started, Active: 1},
		pods:     []corev1.Pod{pod(corev1.PodRunning, false)},
		want:     want{active: 1},
	}, {
		name:   "a terminating Pod keeps the Job unfinished",
		status: batchv1.JobStatus{StartTime: &started, Active: 1},
		pods:   []corev1.Pod{deleting},
		want:   want{},
	}, {
		name:   "counters do not decrease when counted Pods are gone",
		status: batchv1.JobStatus{StartTime: &started, Failed: 1},
		want: want{failed: 1, reason: ReasonBackoffLimitExceeded,
			conditions: []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobFailed}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job := &batchv1.Job{Spec: batchv1.JobSpec{ActiveDeadlineSeconds: tt.deadline}, Status: tt.status}
			st := computeJobStatus(job, tt.pods, now)
			assert.NotNil(t, st.StartTime)
			assert.Equal(t, tt.want.active, st.Active)
			assert.Equal(t, tt.want.ready, *st.Ready)
			assert.Equal(t, tt.want.succeeded, st.Succeeded)
			assert.Equal(t, tt.want.failed, st.Failed)
			var types []batchv1.JobConditionType
			for _, c := range st.Conditions {
				types = append(types, c.Type)
				assert.Equal(t, tt.want.reason, c.Reason)
			}
			assert.Equal(t, tt.want.conditions, types)
			assert.Equal(t, tt.want.completed, st.CompletionTime != nil)
		})
	}
}

func TestComputeJobStatusLeavesFinishedJobs(t *testing.T) {
	now := metav1.Now()
	job := &batchv1.Job{Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
		jobCond(batchv1.JobFailed, ReasonDeadlineExceeded, messageDeadlineExceeded, now),
	}}}
	assert.Equal(t, job.Status, computeJobStatus(job, []corev1.Pod{{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}}, now))
}
