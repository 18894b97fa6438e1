package executor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/magos-dev/magos/tools/harness/executor"
)

func TestRestartedExecutorFailsLostPods(t *testing.T) {
	env.Require(t)
	f := newFixture(t)
	first, err := executor.New(env.Config, executor.Options{RunnerPath: probe, LogDir: t.TempDir(), Namespace: f.ns})
	require.NoError(t, err)
	stopFirst := runExecutor(t, first)
	key := create(t, f.job("apply-1", "sleep"))
	running := waitPod(t, key, phase(corev1.PodRunning))
	waitStarted(t, f.record)

	stopFirst() // the process dies with its executor; nothing is reported
	pod := &corev1.Pod{}
	require.NoError(t, env.Client.Get(context.Background(), keyOf(running), pod))
	require.Equal(t, corev1.PodRunning, pod.Status.Phase)

	startExecutor(t, f.ns)
	got := waitJob(t, key, batchv1.JobFailed)
	assert.Equal(t, int32(1), got.Status.Failed)
	pod = waitPod(t, key, phase(corev1.PodFailed))
	assert.Equal(t, running.UID, pod.UID, "no second Pod")
	assert.Equal(t, executor.ReasonExecutorRestarted, pod.Status.Reason)
	term := pod.Status.ContainerStatuses[0].State.Terminated
	require.NotNil(t, term)
	assert.Equal(t, executor.ReasonContainerStatusUnknown, term.Reason)
	assert.Equal(t, []string{"started"}, records(t, f.record), "the process is not started again")
}
