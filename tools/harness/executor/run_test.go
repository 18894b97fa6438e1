package executor_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/magos-dev/magos/tools/harness/executor"
)

func TestJobRunsToCompletion(t *testing.T) {
	env.Require(t)
	f := newFixture(t)
	ex := startExecutor(t, f.ns)
	key := create(t, f.job("plan-1", "succeed"))

	job := waitJob(t, key, batchv1.JobComplete)
	require.NotNil(t, jobCondition(job, batchv1.JobSuccessCriteriaMet))
	assert.Equal(t, executor.ReasonCompletionsReached, jobCondition(job, batchv1.JobComplete).Reason)
	assert.Equal(t, int32(1), job.Status.Succeeded)
	assert.Equal(t, int32(0), job.Status.Active)
	require.NotNil(t, job.Status.StartTime)
	require.NotNil(t, job.Status.CompletionTime)

	pod := waitPod(t, key, func(p *corev1.Pod) bool { return len(p.Finalizers) == 0 })
	t.Run("the Pod is made from the template like the job controller makes it", func(t *testing.T) {
		assert.True(t, strings.HasPrefix(pod.Name, "plan-1-"))
		assert.Len(t, pod.Name, len("plan-1-")+5)
		assert.Equal(t, "plan-1", pod.Labels["job-name"])
		assert.Equal(t, "plan-1", pod.Labels[batchv1.JobNameLabel])
		assert.Equal(t, "demo", pod.Labels["magos.dev/workspace"])
		assert.Equal(t, executor.DefaultNodeName, pod.Spec.NodeName)
		ref := metav1.GetControllerOf(pod)
		require.NotNil(t, ref)
		assert.Equal(t, job.UID, ref.UID)
		assert.Equal(t, "Job", ref.Kind)
	})
	t.Run("the Pod reports the terminated container", func(t *testing.T) {
		assert.Equal(t, corev1.PodSucceeded, pod.Status.Phase)
		term := pod.Status.ContainerStatuses[0].State.Terminated
		assert.Equal(t, int32(0), term.ExitCode)
		assert.Equal(t, "Completed", term.Reason)
		assert.False(t, term.FinishedAt.Before(&term.StartedAt))
	})
	rep := report(t, pod)
	t.Run("the environment is resolved as the kubelet resolves it", func(t *testing.T) {
		assert.Equal(t, []string{"succeed"}, rep.Args)
		assert.Equal(t, "s3cr3t", rep.Env["PROBE_SECRET"], "secretKeyRef")
		assert.Equal(t, f.ns, rep.Env["PROBE_NAMESPACE"], "fieldRef metadata.namespace")
		assert.Equal(t, pod.Name, rep.Env["PROBE_POD"], "fieldRef metadata.name")
		assert.Equal(t, f.sa, rep.Env["PROBE_SA"], "fieldRef spec.serviceAccountName")
		assert.Equal(t, "allowed-value", rep.Env["FROM_CM_value"], "envFrom with a prefix")
		assert.Equal(t, "allowed-and-allowed-value", rep.Env["PROBE_EXPANDED"], "$(VAR) expansion")
		assert.Equal(t, "/local/versions", rep.Env["MAGOS_VERSIONS_DIR"], "Options.Env overrides")
		assert.NotEqual(t, os.Getenv("HOME"), rep.Env["HOME"], "HOME is the Pod's own")
		assert.True(t, rep.WorkDir, "MAGOS_WORK_DIR is writable")
	})
	t.Run("the process acts as the Pod's ServiceAccount", func(t *testing.T) {
		assert.Equal(t, "system:serviceaccount:"+f.ns+":"+f.sa, rep.User)
		assert.ElementsMatch(t, []string{"system:serviceaccounts", "system:serviceaccounts:" + f.ns, "system:authenticated"}, rep.Groups)
		assert.Equal(t, "allowed-value", rep.Allowed)
		assert.Equal(t, string(metav1.StatusReasonForbidden), rep.Forbidden, "RBAC is enforced")
	})
	t.Run("the output is in the Pod's log file", func(t *testing.T) {
		data, err := os.ReadFile(ex.LogPath(f.ns, pod.Name))
		require.NoError(t, err)
		assert.Contains(t, string(data), "probe done: succeed")
	})
	assert.Equal(t, []string{"started"}, records(t, f.record))
}

func TestJobFailsWhenItsProcessFails(t *testing.T) {
	env.Require(t)
	f := newFixture(t)
	ex := startExecutor(t, f.ns)
	key := create(t, f.job("plan-1", "fail"))

	job := waitJob(t, key, batchv1.JobFailed)
	assert.Equal(t, executor.ReasonBackoffLimitExceeded, jobCondition(job, batchv1.JobFailed).Reason)
	require.NotNil(t, jobCondition(job, batchv1.JobFailureTarget))
	assert.Nil(t, jobCondition(job, batchv1.JobComplete))
	assert.Nil(t, job.Status.CompletionTime)
	assert.Equal(t, int32(1), job.Status.Failed)
	assert.Equal(t, int32(0), job.Status.Active)

	pod := waitPod(t, key, phase(corev1.PodFailed))
	term := pod.Status.ContainerStatuses[0].State.Terminated
	require.NotNil(t, term)
	assert.Equal(t, int32(1), term.ExitCode)
	assert.Equal(t, "Error", term.Reason)
	assert.Equal(t, "s3cr3t", report(t, pod).Env["PROBE_SECRET"], "the termination message is kept on failure")
	data, err := os.ReadFile(ex.LogPath(f.ns, pod.Name))
	require.NoError(t, err)
	assert.Contains(t, string(data), "failing as asked")
}

func TestJobWithoutWorkspaceLabelIsIgnored(t *testing.T) {
	env.Require(t)
	f := newFixture(t)
	startExecutor(t, f.ns)
	other := f.job("other", "succeed")
	other.Labels = nil // the apiserver would copy the template's labels
	other.Spec.Template.Labels = nil
	otherKey := create(t, other)
	key := create(t, f.job("plan-1", "succeed"))

	waitJob(t, key, batchv1.JobComplete)
	assert.Empty(t, jobPods(t, otherKey))
	got := &batchv1.Job{}
	require.NoError(t, env.Client.Get(context.Background(), otherKey, got))
	assert.Nil(t, got.Status.StartTime)
}
