package executor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/magos-dev/magos/tools/harness/executor"
)

func TestMaxProcessesQueuesPods(t *testing.T) {
	env.Require(t)
	f := newFixture(t)
	ex := startExecutor(t, f.ns, func(o *executor.Options) { o.MaxProcesses = 1 })
	first := create(t, f.job("apply-1", "sleep"))
	waitPod(t, first, phase(corev1.PodRunning))

	second := create(t, f.job("apply-2", "succeed"))
	pod := waitPod(t, second, func(p *corev1.Pod) bool { return len(p.Status.ContainerStatuses) == 1 })
	assert.Equal(t, corev1.PodPending, pod.Status.Phase)
	assert.Equal(t, executor.ReasonContainerCreating, pod.Status.ContainerStatuses[0].State.Waiting.Reason)
	assert.Never(t, func() bool { return len(records(t, f.record)) > 1 }, 2*time.Second, 100*time.Millisecond,
		"a second process started while the only slot was taken")

	require.NoError(t, ex.Kill(first.Namespace, first.Name))
	waitJob(t, second, batchv1.JobComplete)
	assert.Equal(t, []string{"started", "started"}, records(t, f.record))
}
