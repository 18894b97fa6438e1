package setup

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
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

// trimJob is the cache transform of Jobs: no managedFields, no Pod
// template.
func trimJob(obj any) (any, error) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return stripManagedFields(obj)
	}
	job.ManagedFields = nil
	job.Spec.Template = corev1.PodTemplateSpec{}
	job.Spec.Selector = nil
	job.Spec.PodFailurePolicy = nil
	job.Spec.SuccessPolicy = nil
	return job, nil
}

// trimPod is the cache transform of Pods: no managedFields, and of the
// spec only the node it runs on.
func trimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return stripManagedFields(obj)
	}
	pod.ManagedFields = nil
	pod.Spec = corev1.PodSpec{NodeName: pod.Spec.NodeName}
	return pod, nil
}

// stripManagedFields passes on what is not a Job or a Pod (a deleted
// object's tombstone) the way the default transform does.
var stripManagedFields = cache.TransformStripManagedFields()
