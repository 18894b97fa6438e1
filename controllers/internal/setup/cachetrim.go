package setup

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// The cache keeps every runner Job and Pod of every Workspace until the
// Job's TTL removes it: two of each per run, so at thousands of Workspaces
// they are most of a controller's memory, and most of each is what the
// controllers write once and never read back from the cache: the Pod
// template (containers, environment, volumes, security context), the run
// annotations a Pod copies from its Job, and the kubelet's account of a
// Pod (conditions, addresses, container IDs, and the runner's report in
// its termination message, up to 4 KiB). The cache therefore keeps of a
// Job its metadata and its status conditions, and of a Pod its metadata
// without annotations, its node, its phase and, while it runs, per
// container what says it will not start (the waiting state): what the
// controllers decide on from the cache (labels, owners, the Job's run
// annotations and conditions, a Pod's phase and start failure). A
// controller that needs more of a Job or Pod (a run's report, why it
// ended, the token's Pod) reads it live (APIReader).

// trimJob is the cache transform of Jobs: the metadata as trimMetadata
// keeps it and the status conditions.
func trimJob(obj any) (any, error) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return trimMetadata(obj)
	}
	_, _ = trimMetadata(job)
	job.Spec = batchv1.JobSpec{}
	job.Status = batchv1.JobStatus{Conditions: job.Status.Conditions}
	return job, nil
}

// trimPod is the cache transform of Pods: the metadata as trimMetadata
// keeps it but without annotations, the node it runs on, its phase and
// reason, and of each container its name, image and waiting state.
func trimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return trimMetadata(obj)
	}
	_, _ = trimMetadata(pod)
	pod.Annotations = nil
	pod.Spec = corev1.PodSpec{NodeName: pod.Spec.NodeName}
	st := corev1.PodStatus{Phase: pod.Status.Phase, Reason: pod.Status.Reason}
	if st.Phase != corev1.PodSucceeded && st.Phase != corev1.PodFailed {
		st.InitContainerStatuses = waitingOnly(pod.Status.InitContainerStatuses)
		st.ContainerStatuses = waitingOnly(pod.Status.ContainerStatuses)
	}
	pod.Status = st
	return pod, nil
}

// waitingOnly keeps of each container status its name, image and waiting
// state (container names and images shared, shareMetadata's strings); nil
// for none. An ended Pod keeps none: its containers no longer start.
func waitingOnly(statuses []corev1.ContainerStatus) []corev1.ContainerStatus {
	if len(statuses) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(statuses))
	for i, cs := range statuses {
		metadataStrings.share(&cs.Name)
		metadataStrings.share(&cs.Image)
		out[i] = corev1.ContainerStatus{Name: cs.Name, Image: cs.Image, State: corev1.ContainerState{Waiting: cs.State.Waiting}}
	}
	return out
}

// lastAppliedAnnotation is where `kubectl apply` keeps a copy of the whole
// object as last applied: as large as the object, and read by kubectl only.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// trimMetadata is the cache transform of every other kind: no
// managedFields, no copy of the object as kubectl last applied it. No
// controller reads either, and together they can be most of an object's
// size. What objects hold alike in their metadata is shared
// (shareMetadata). Nothing else changes, and no controller updates an
// object from the cache (they patch), so the annotation stays on the
// server. What is
// not an object (a deleted object's tombstone) passes unchanged.
func trimMetadata(in any) (any, error) {
	obj, err := meta.Accessor(in)
	if err != nil {
		return in, nil
	}
	if obj.GetManagedFields() != nil {
		obj.SetManagedFields(nil)
	}
	if a := obj.GetAnnotations(); a != nil {
		if _, ok := a[lastAppliedAnnotation]; ok {
			delete(a, lastAppliedAnnotation)
			obj.SetAnnotations(a)
		}
	}
	shareMetadata(obj)
	return in, nil
}
