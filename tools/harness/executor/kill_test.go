package executor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/magos-dev/magos/tools/harness/executor"
)

func TestKillFailsThePodAsALostNode(t *testing.T) {
	env.Require(t)
	f := newFixture(t)
	ex := startExecutor(t, f.ns)
	key := create(t, f.job("apply-1", "sleep"))

	waitPod(t, key, phase(corev1.PodRunning))
	waitStarted(t, f.record)
	require.NoError(t, ex.Kill(key.Namespace, key.Name))

	got := waitJob(t, key, batchv1.JobFailed)
	assert.Equal(t, executor.ReasonBackoffLimitExceeded, jobCondition(got, batchv1.JobFailed).Reason)
	pod := waitPod(t, key, phase(corev1.PodFailed))
	assert.Equal(t, executor.ReasonNodeLost, pod.Status.Reason)
	term := pod.Status.ContainerStatuses[0].State.Terminated
	require.NotNil(t, term)
	assert.Equal(t, int32(137), term.ExitCode)
	assert.Equal(t, []string{"started"}, records(t, f.record), "SIGKILL gives no chance to clean up")

	assert.Error(t, ex.Kill(key.Namespace, key.Name), "nothing left to kill")
}
