package setup

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// runnerMeta is the metadata the controllers decide on.
func runnerMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: "ws-plan-1", Namespace: "team", UID: "u1",
		Labels:          map[string]string{"magos.dev/workspace": "ws"},
		Annotations:     map[string]string{"magos.dev/revision": "main@sha1:abc"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "Workspace", Name: "ws", UID: "w1", Controller: ptr.To(true)}},
		ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}},
	}
}

func runnerPodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		NodeName:   "node-1",
		Containers: []corev1.Container{{Name: "runner", Image: "runner:1", Env: []corev1.EnvVar{{Name: "MAGOS_RUN", Value: "plan"}}}},
		Volumes:    []corev1.Volume{{Name: "work"}},
	}
}

func TestTrimJobKeepsWhatControllersReadAndDropsTheTemplate(t *testing.T) {
	finished := batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}, Succeeded: 1}
	job := &batchv1.Job{
		ObjectMeta: runnerMeta(),
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0), ActiveDeadlineSeconds: ptr.To[int64](3600),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}, Spec: runnerPodSpec()},
		},
		Status: finished,
	}
	out, err := trimJob(job)
	require.NoError(t, err)
	got := out.(*batchv1.Job)

	want := runnerMeta()
	want.ManagedFields = nil
	assert.Equal(t, want, got.ObjectMeta, "labels, annotations and owners stay; managedFields go")
	assert.Equal(t, finished, got.Status)
	assert.Equal(t, corev1.PodTemplateSpec{}, got.Spec.Template)
	assert.Equal(t, ptr.To[int64](3600), got.Spec.ActiveDeadlineSeconds, "scalar spec fields stay")
}

func TestTrimPodKeepsStatusAndNode(t *testing.T) {
	ended := corev1.PodStatus{
		Phase: corev1.PodSucceeded,
		ContainerStatuses: []corev1.ContainerStatus{{Name: "runner", State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Message: `{"phase":"plan"}`},
		}}},
	}
	out, err := trimPod(&corev1.Pod{ObjectMeta: runnerMeta(), Spec: runnerPodSpec(), Status: ended})
	require.NoError(t, err)
	got := out.(*corev1.Pod)

	want := runnerMeta()
	want.ManagedFields = nil
	assert.Equal(t, want, got.ObjectMeta)
	assert.Equal(t, ended, got.Status, "the termination message (the run's report) stays")
	assert.Equal(t, corev1.PodSpec{NodeName: "node-1"}, got.Spec)
}

// TestTrimJobAndPodDropTheLastAppliedCopy: a Job or Pod applied with
// kubectl loses its last-applied copy in the cache like any other object.
func TestTrimJobAndPodDropTheLastAppliedCopy(t *testing.T) {
	applied := func() metav1.ObjectMeta {
		m := runnerMeta()
		m.Annotations = map[string]string{lastAppliedAnnotation: `{"kind":"Job"}`, "keep": "me"}
		return m
	}
	job, err := trimJob(&batchv1.Job{ObjectMeta: applied()})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"keep": "me"}, job.(*batchv1.Job).Annotations)
	pod, err := trimPod(&corev1.Pod{ObjectMeta: applied()})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"keep": "me"}, pod.(*corev1.Pod).Annotations)
}

func TestCacheOptionsTrimJobsAndPods(t *testing.T) {
	co, err := Options{WatchNamespaces: []string{"team"}}.CacheOptions(nil)
	require.NoError(t, err)
	assert.Contains(t, co.DefaultNamespaces, "team")
	require.NotNil(t, co.DefaultTransform, "managedFields are stripped from every kind")
	for obj, by := range co.ByObject {
		switch obj.(type) {
		case *batchv1.Job, *corev1.Pod:
			assert.NotNil(t, by.Transform, "%T", obj)
		}
	}
}

func TestTrimMetadataDropsManagedFieldsAndTheLastAppliedCopy(t *testing.T) {
	m := runnerMeta()
	m.Annotations[lastAppliedAnnotation] = `{"apiVersion":"magos.dev/v1alpha1","kind":"Workspace"}`
	out, err := trimMetadata(&corev1.ConfigMap{ObjectMeta: m, Data: map[string]string{"k": "v"}})
	require.NoError(t, err)
	got := out.(*corev1.ConfigMap)

	want := runnerMeta()
	want.ManagedFields = nil
	assert.Equal(t, want, got.ObjectMeta, "every other annotation, label and owner stays")
	assert.Equal(t, map[string]string{"k": "v"}, got.Data)

	tombstone := "not an object"
	out, err = trimMetadata(tombstone)
	require.NoError(t, err)
	assert.Equal(t, tombstone, out)
}
