package executor_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/magos-dev/magos/tools/harness/executor"
)

func TestMissingSecretIsCreateContainerConfigError(t *testing.T) {
	env.Require(t)
	tests := []struct {
		name    string
		mutate  func(*corev1.Container)
		message string
	}{{
		name: "missing Secret",
		mutate: func(c *corev1.Container) {
			c.Env[3].ValueFrom.SecretKeyRef.Name = "absent"
		},
		message: `secrets "absent" not found`,
	}, {
		name: "missing key",
		mutate: func(c *corev1.Container) {
			c.Env[3].ValueFrom.SecretKeyRef.Key = "absent"
		},
		message: "couldn't find key absent in Secret",
	}, {
		name: "missing envFrom ConfigMap",
		mutate: func(c *corev1.Container) {
			c.EnvFrom[0].ConfigMapRef.Name = "absent"
		},
		message: `configmaps "absent" not found`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			startExecutor(t, f.ns)
			job := f.job("plan-1", "succeed")
			tt.mutate(&job.Spec.Template.Spec.Containers[0])
			key := create(t, job)

			waitPod(t, key, func(p *corev1.Pod) bool {
				if len(p.Status.ContainerStatuses) == 0 {
					return false
				}
				w := p.Status.ContainerStatuses[0].State.Waiting
				return w != nil && w.Reason == executor.ReasonCreateContainerConfigError
			})
			got := waitJob(t, key, batchv1.JobFailed)
			assert.Equal(t, executor.ReasonBackoffLimitExceeded, jobCondition(got, batchv1.JobFailed).Reason)

			pod := waitPod(t, key, phase(corev1.PodFailed))
			assert.Equal(t, executor.ReasonCreateContainerConfigError, pod.Status.Reason)
			assert.Contains(t, pod.Status.Message, tt.message)
			w := pod.Status.ContainerStatuses[0].State.Waiting
			if assert.NotNil(t, w, "the container never started") {
				assert.Contains(t, w.Message, tt.message)
			}
			assert.Empty(t, records(t, f.record), "the process never started")
		})
	}
}

func TestOptionalReferencesMayBeMissing(t *testing.T) {
	env.Require(t)
	f := newFixture(t)
	startExecutor(t, f.ns)
	job := f.job("plan-1", "succeed")
	c := &job.Spec.Template.Spec.Containers[0]
	c.Env = append(c.Env, corev1.EnvVar{Name: "PROBE_OPTIONAL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Key: "k", Optional: new(true),
	}}})
	c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: new(true),
	}})
	key := create(t, job)

	waitJob(t, key, batchv1.JobComplete)
	rep := report(t, waitPod(t, key, phase(corev1.PodSucceeded)))
	assert.NotContains(t, rep.Env, "PROBE_OPTIONAL")
}
