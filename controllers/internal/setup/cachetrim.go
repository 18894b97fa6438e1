package setup

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// The cache keeps every runner Job and Pod of every Workspace until the
// Job's TTL removes it: two of each per run, so at thousands of Workspaces
// they are most of a controller's memory, and most of each is the Pod
// template (containers, environment, volumes, security context) that the
// controllers write once and never read back. The cache therefore keeps
// of a Job its metadata, its scalar spec fields and its status, and of a
// Pod its metadata, node and status: what the controllers decide on (labels,
// annotations, owners, conditions, container states and termination
// messages). A controller that needs a Job's or a Pod's template reads it
// live (APIReader).

// trimJob is the cache transform of Jobs: the metadata as trimMetadata
// keeps it, no Pod template.
func trimJob(obj any) (any, error) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return trimMetadata(obj)
	}
	_, _ = trimMetadata(job)
	job.Spec.Template = corev1.PodTemplateSpec{}
	job.Spec.Selector = nil
	job.Spec.PodFailurePolicy = nil
	job.Spec.SuccessPolicy = nil
	return job, nil
}

// trimPod is the cache transform of Pods: the metadata as trimMetadata
// keeps it, and of the spec only the node it runs on.
func trimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return trimMetadata(obj)
	}
	_, _ = trimMetadata(pod)
	pod.Spec = corev1.PodSpec{NodeName: pod.Spec.NodeName}
	return pod, nil
}

// lastAppliedAnnotation is where `kubectl apply` keeps a copy of the whole
// object as last applied: as large as the object, and read by kubectl only.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// trimMetadata is the cache transform of every other kind: no
// managedFields, no copy of the object as kubectl last applied it. No
// controller reads either, and together they can be most of an object's
// size. Nothing else changes, and no controller updates an object from
// the cache (they patch), so the annotation stays on the server. What is
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
	return in, nil
}
