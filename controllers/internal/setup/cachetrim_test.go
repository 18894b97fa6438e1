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
	conditions := []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	finished := batchv1.JobStatus{Conditions: conditions, Succeeded: 1, StartTime: &metav1.Time{}, CompletionTime: &metav1.Time{}}
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
	assert.Equal(t, batchv1.JobStatus{Conditions: conditions}, got.Status, "the conditions say how the run ended")
	assert.Equal(t, batchv1.JobSpec{}, got.Spec)
}

// TestTrimPodKeepsPhaseStartFailureAndNode: of a Pod the cache keeps what
// the controllers decide on (its phase, a container that will not start,
// its node, labels and owners), not the kubelet's account of it nor the
// runner's report, which is read live.
func TestTrimPodKeepsPhaseStartFailureAndNode(t *testing.T) {
	pullFailure := &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "not found"}
	status := corev1.PodStatus{
		Phase: corev1.PodPending, Reason: "Evicted", PodIP: "10.0.0.1", QOSClass: corev1.PodQOSBurstable,
		Conditions:            []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Message: "containers ended"}},
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "engine", Image: "engine:1", ImageID: "sha256:e", State: corev1.ContainerState{Waiting: pullFailure}}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "runner", Image: "runner:1", ContainerID: "containerd://c", RestartCount: 1, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Message: `{"phase":"plan"}`},
		}}},
	}
	out, err := trimPod(&corev1.Pod{ObjectMeta: runnerMeta(), Spec: runnerPodSpec(), Status: status})
	require.NoError(t, err)
	got := out.(*corev1.Pod)

	want := runnerMeta()
	want.ManagedFields = nil
	want.Annotations = nil
	assert.Equal(t, want, got.ObjectMeta, "labels and owners stay; the run annotations copied from the Job go")
	assert.Equal(t, corev1.PodStatus{
		Phase: corev1.PodPending, Reason: "Evicted",
		InitContainerStatuses: []corev1.ContainerStatus{{Name: "engine", Image: "engine:1", State: corev1.ContainerState{Waiting: pullFailure}}},
		ContainerStatuses:     []corev1.ContainerStatus{{Name: "runner", Image: "runner:1"}},
	}, got.Status, "the phase and why a container will not start stay; the report and the kubelet's account go")
	assert.Equal(t, corev1.PodSpec{NodeName: "node-1"}, got.Spec)

	status.Phase = corev1.PodFailed
	out, err = trimPod(&corev1.Pod{ObjectMeta: runnerMeta(), Status: status})
	require.NoError(t, err)
	assert.Equal(t, corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}, out.(*corev1.Pod).Status, "an ended Pod keeps its phase and reason")
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
	assert.Nil(t, pod.(*corev1.Pod).Annotations, "a Pod keeps no annotation in the cache")
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
