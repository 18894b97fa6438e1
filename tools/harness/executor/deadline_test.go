package executor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/magos-dev/magos/tools/harness/executor"
)

func TestActiveDeadlineStopsTheProcess(t *testing.T) {
	env.Require(t)
	f := newFixture(t)
	startExecutor(t, f.ns)
	job := f.job("apply-1", "sleep")
	job.Spec.ActiveDeadlineSeconds = new(int64(3))
	key := create(t, job)

	waitPod(t, key, phase(corev1.PodRunning))
	got := waitJob(t, key, batchv1.JobFailed)
	assert.Equal(t, executor.ReasonDeadlineExceeded, jobCondition(got, batchv1.JobFailed).Reason)
	assert.Equal(t, executor.ReasonDeadlineExceeded, jobCondition(got, batchv1.JobFailureTarget).Reason)
	assert.Equal(t, int32(1), got.Status.Failed)

	pod := waitPod(t, key, phase(corev1.PodFailed))
	assert.Equal(t, executor.ReasonDeadlineExceeded, pod.Status.Reason)
	term := pod.Status.ContainerStatuses[0].State.Terminated
	require.NotNil(t, term)
	assert.Equal(t, executor.ReasonDeadlineExceeded, term.Reason)
	assert.Equal(t, int32(143), term.ExitCode, "the probe exits 143 on SIGTERM")
	assert.Equal(t, []string{"started", "terminated"}, records(t, f.record), "stopped with SIGTERM first")
}
