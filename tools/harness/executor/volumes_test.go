package executor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/magos-dev/magos/tools/harness/executor"
)

// withBackendVolume mounts Secret "backend" key backend.tf at
// /etc/magos/backend and points PROBE_FILE at it, as the
// workspace-controller does for a user backend.
func withBackendVolume(job *batchv1.Job) {
	spec := &job.Spec.Template.Spec
	spec.Volumes = append(spec.Volumes,
		corev1.Volume{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: "backend", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: "backend", Items: []corev1.KeyToPath{{Key: "backend.tf", Path: "backend.tf"}},
		}}})
	c := &spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts,
		corev1.VolumeMount{Name: "work", MountPath: "/tmp"},
		corev1.VolumeMount{Name: "backend", MountPath: "/etc/magos/backend", ReadOnly: true})
	c.Env = append(c.Env, corev1.EnvVar{Name: "PROBE_FILE", Value: "/etc/magos/backend/backend.tf"})
}

func TestSecretVolumeIsMountedAndItsPathMapped(t *testing.T) {
	env.Require(t)
	f := newFixture(t)
	startExecutor(t, f.ns)
	require.NoError(t, env.Client.Create(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "backend"},
		Data:       map[string][]byte{"backend.tf": []byte(`terraform { backend "http" {} }`), "other": []byte("x")},
	}))
	job := f.job("plan-1", "succeed")
	withBackendVolume(job)
	key := create(t, job)

	waitJob(t, key, batchv1.JobComplete)
	rep := report(t, waitPod(t, key, phase(corev1.PodSucceeded)))
	assert.Equal(t, `terraform { backend "http" {} }`, rep.File)
}

func TestMissingVolumeSecretFailsToMount(t *testing.T) {
	env.Require(t)
	f := newFixture(t)
	startExecutor(t, f.ns)
	job := f.job("plan-1", "succeed")
	withBackendVolume(job)
	key := create(t, job)

	waitPod(t, key, func(p *corev1.Pod) bool {
		if len(p.Status.ContainerStatuses) == 0 {
			return false
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == executor.ReasonContainerCreating && w.Message != ""
	})
	waitJob(t, key, batchv1.JobFailed)
	pod := waitPod(t, key, phase(corev1.PodFailed))
	assert.Equal(t, executor.ReasonFailedMount, pod.Status.Reason)
	assert.Contains(t, pod.Status.Message, `secrets "backend" not found`)
	assert.Empty(t, records(t, f.record))
}
