package executor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func keyOf(o client.Object) types.NamespacedName { return client.ObjectKeyFromObject(o) }

// waitGone waits until the object is deleted.
func waitGone(t *testing.T, o client.Object) {
	t.Helper()
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), keyOf(o), o))
	}, timeout, 100*time.Millisecond, "%s was not deleted", keyOf(o))
}

func TestDeletingARunningJob(t *testing.T) {
	env.Require(t)
	for _, policy := range []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground} {
		t.Run(string(policy), func(t *testing.T) {
			f := newFixture(t)
			startExecutor(t, f.ns)
			job := f.job("apply-1", "sleep")
			key := create(t, job)
			pod := waitPod(t, key, phase(corev1.PodRunning))
			waitStarted(t, f.record)

			require.NoError(t, env.Client.Delete(context.Background(), job, client.PropagationPolicy(policy)))
			waitGone(t, job)
			waitGone(t, pod)
			assert.Equal(t, []string{"started", "terminated"}, records(t, f.record), "stopped gracefully")
		})
	}
}

func TestOrphanDeletionLeavesThePodRunning(t *testing.T) {
	env.Require(t)
	f := newFixture(t)
	startExecutor(t, f.ns)
	job := f.job("apply-1", "sleep")
	key := create(t, job)
	waitPod(t, key, phase(corev1.PodRunning))
	waitStarted(t, f.record)

	// batch/v1 Jobs default to Orphan propagation.
	require.NoError(t, env.Client.Delete(context.Background(), job))
	waitGone(t, job)
	pod := waitPod(t, key, func(p *corev1.Pod) bool { return len(p.OwnerReferences) == 0 && len(p.Finalizers) == 0 })
	assert.Equal(t, corev1.PodRunning, pod.Status.Phase, "as on a real cluster, the orphan keeps running")

	require.NoError(t, env.Client.Delete(context.Background(), pod))
	waitGone(t, pod)
	assert.Equal(t, []string{"started", "terminated"}, records(t, f.record))
}

func TestFinishedJobIsDeletedAfterItsTTL(t *testing.T) {
	env.Require(t)
	f := newFixture(t)
	startExecutor(t, f.ns)
	job := f.job("plan-1", "succeed")
	job.Spec.TTLSecondsAfterFinished = new(int32(1))

	// Watch the Job from before it exists: with a one-second TTL, polling
	// could miss the Complete state between completion and deletion.
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	w, err := wc.Watch(ctx, &batchv1.JobList{}, client.InNamespace(f.ns))
	require.NoError(t, err)
	defer w.Stop()
	create(t, job)

	completed, deleted := false, false
	for ev := range w.ResultChan() {
		j, ok := ev.Object.(*batchv1.Job)
		if !ok || j.Name != job.Name {
			continue
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue {
				completed = true
			}
		}
		if ev.Type == watch.Deleted {
			deleted = true
			break
		}
	}
	require.True(t, completed, "the Job completed before it was deleted")
	require.True(t, deleted, "the Job was deleted after its TTL")
	var pods corev1.PodList
	require.Eventually(t, func() bool {
		return env.Client.List(context.Background(), &pods, client.InNamespace(f.ns), client.MatchingLabels{"job-name": job.Name}) == nil && len(pods.Items) == 0
	}, timeout, 100*time.Millisecond, "the Job's Pod was deleted with it")
}
