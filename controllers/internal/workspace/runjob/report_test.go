package runjob

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestReadReport: what a finished run's Job and Pods say of it, for every
// way a run ends, and for reports a run's own code may have forged.
func TestReadReport(t *testing.T) {
	const version = "v0.1.0"
	job := func(cond batchv1.JobConditionType, reason, message string) *batchv1.Job {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "app-plan-3", UID: "job-uid"}}
		if cond != "" {
			j.Status.Conditions = []batchv1.JobCondition{{Type: cond, Status: corev1.ConditionTrue, Reason: reason, Message: message}}
		}
		return j
	}
	report := func(res magosv1.RunResult) string {
		b, err := json.Marshal(res)
		require.NoError(t, err)
		return string(b)
	}
	ok := magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultSucceeded, Reason: magosv1.ResultSucceeded, Contract: magosv1.RunContractMajor, RunnerVersion: version, PlanDigest: "sha256:p"}
	pod := func(name string, owned bool, phase corev1.PodPhase, message string, exit int32) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"job-name": "app-plan-3"}}}
		if owned {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "app-plan-3", UID: "job-uid", Controller: ptr.To(true)}}
		}
		p.Status.Phase = phase
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: RunnerContainer, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{Message: message, ExitCode: exit, Reason: "Error"}}}}
		return p
	}
	failedJob := job(batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit")

	for _, tt := range []struct {
		name     string
		job      *batchv1.Job
		pods     []corev1.Pod
		want     magosv1.RunResult
		pod      string
		mismatch bool
	}{{
		name: "the Job's Pod succeeded and reported: its report",
		job:  job(batchv1.JobComplete, "", ""),
		pods: []corev1.Pod{pod("runner", true, corev1.PodSucceeded, report(ok), 0)},
		want: ok, pod: "runner",
	}, {
		name: "a Pod that only carries the Job's label does not report for it",
		job:  failedJob,
		pods: []corev1.Pod{pod("forged", false, corev1.PodSucceeded, report(ok), 0)},
		want: magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultFailed, Reason: magosv1.ReasonRunFailed,
			Message: "Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit"},
	}, {
		name: "a success report from a Pod and Job that did not succeed is not the runner's",
		job:  failedJob,
		pods: []corev1.Pod{pod("runner", true, corev1.PodFailed, report(ok), 1)},
		want: func() magosv1.RunResult { r := ok; r.Result = magosv1.ResultFailed; return r }(), pod: "runner",
	}, {
		name: "a Job that succeeded vouches for its Pod's report",
		job:  job(batchv1.JobComplete, "", ""),
		pods: []corev1.Pod{pod("runner", true, corev1.PodFailed, report(ok), 0)},
		want: ok, pod: "runner",
	}, {
		name: "a Job gone: its Pod's report is still read",
		pods: []corev1.Pod{pod("runner", false, corev1.PodSucceeded, report(ok), 0)},
		want: ok, pod: "runner",
	}, {
		name: "a Job gone and no Pod: JobMissing",
		want: magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultFailed, Reason: magosv1.ReasonJobMissing,
			Message: "the run's Job disappeared before its result was read"},
	}, {
		name: "a Job that succeeded without a report: NoReport",
		job:  job(batchv1.JobComplete, "", ""),
		pods: []corev1.Pod{pod("runner", true, corev1.PodSucceeded, "", 0)},
		want: magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultFailed, Reason: magosv1.ReasonNoReport,
			Message: "the runner exited without a report"},
		pod: "runner",
	}, {
		name: "a runner killed before it reported: how, and the Job's failure",
		job:  job(batchv1.JobFailed, "DeadlineExceeded", "Job was active longer than specified deadline"),
		pods: []corev1.Pod{pod("runner", true, corev1.PodFailed, "", 137)},
		want: magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultFailed, Reason: magosv1.ReasonRunFailed,
			Message: "the runner was killed (Error, exit code 137) before it could report; Job failed (DeadlineExceeded): Job was active longer than specified deadline"},
		pod: "runner",
	}, {
		name: "a termination message that is no report is ignored",
		job:  failedJob,
		pods: []corev1.Pod{pod("runner", true, corev1.PodFailed, "panic: boom", 2)},
		want: magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultFailed, Reason: magosv1.ReasonRunFailed,
			Message: "the runner ended (Error, exit code 2) without a report; Job failed (BackoffLimitExceeded): Job has reached the specified backoff limit"},
		pod: "runner",
	}, {
		name: "a runner of another build: trusted, and the mismatch named",
		job:  job(batchv1.JobComplete, "", ""),
		pods: []corev1.Pod{pod("runner", true, corev1.PodSucceeded, report(func() magosv1.RunResult { r := ok; r.RunnerVersion = "v0.0.9"; return r }()), 0)},
		want: func() magosv1.RunResult {
			r := ok
			r.RunnerVersion, r.Message = "v0.0.9", "the runner is version v0.0.9, this controller v0.1.0"
			return r
		}(),
		pod: "runner", mismatch: true,
	}, {
		name: "a runner of another run contract: not trusted",
		job:  job(batchv1.JobComplete, "", ""),
		pods: []corev1.Pod{pod("runner", true, corev1.PodSucceeded, report(func() magosv1.RunResult { r := ok; r.Contract = 0; return r }()), 0)},
		want: magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultFailed, Reason: magosv1.ReasonRunnerVersionMismatch, RunnerVersion: version,
			Message: "the runner (version v0.1.0) speaks run contract 0, this controller (version v0.1.0) run contract 1: its report is not trusted; run the runner image of the controller's release"},
		pod: "runner", mismatch: true,
	}} {
		t.Run(tt.name, func(t *testing.T) {
			got := ReadReport(tt.job, tt.pods, magosv1.RunPlan, version)
			assert.Equal(t, tt.want, got.Result)
			if tt.pod == "" {
				assert.Nil(t, got.Pod)
			} else if assert.NotNil(t, got.Pod) {
				assert.Equal(t, tt.pod, got.Pod.Name)
			}
			assert.Equal(t, tt.mismatch, got.Mismatch != "")
		})
	}
}
