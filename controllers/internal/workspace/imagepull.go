package workspace

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// ImagePullFailedReason: an image of the run's Pod (the engine image or the
// runner image) cannot be pulled. The run fails at once instead of waiting
// for its deadline, and is retried after the retry interval.
const ImagePullFailedReason = "ImagePullFailed"

// pullFailureReasons are the kubelet's waiting reasons of a container whose
// image it cannot get; it keeps retrying them until the Pod's deadline.
var pullFailureReasons = map[string]bool{
	"ErrImagePull":      true,
	"ImagePullBackOff":  true,
	"InvalidImageName":  true,
	"ErrImageNeverPull": true,
	"ImageInspectError": true,
}

// pullFailure describes the first container of pod, init containers first,
// that waits on an image it cannot pull; "" when there is none.
func pullFailure(pod *corev1.Pod) string {
	check := func(kind string, statuses []corev1.ContainerStatus) string {
		for _, cs := range statuses {
			if w := cs.State.Waiting; w != nil && pullFailureReasons[w.Reason] {
				msg := fmt.Sprintf("%scontainer %q of Pod %s cannot pull image %s (%s)", kind, cs.Name, pod.Name, cs.Image, w.Reason)
				if w.Message != "" {
					msg += ": " + w.Message
				}
				return msg
			}
		}
		return ""
	}
	if msg := check("init ", pod.Status.InitContainerStatuses); msg != "" {
		return msg
	}
	return check("", pod.Status.ContainerStatuses)
}

// failOnPullError ends the running Job whose Pod cannot pull an image: it
// deletes the Job (its Pod goes with it) and records the run as failed with
// ImagePullFailed and the kubelet's message.
func (r *Reconciler) failOnPullError(ctx context.Context, ws *magosv1.Workspace, job *batchv1.Job, retry retryPolicy) error {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{"job-name": job.Name}); err != nil {
		return err
	}
	msg := ""
	for i := range pods.Items {
		if !metav1.IsControlledBy(&pods.Items[i], job) {
			continue
		}
		if msg = pullFailure(&pods.Items[i]); msg != "" {
			break
		}
	}
	if msg == "" {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Ending a run whose image cannot be pulled", "job", job.Name, "message", msg)
	err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &job.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Job %s: %w", job.Name, err)
	}
	res := magosv1.RunResult{Phase: ws.Status.CurrentRun.Phase, Result: magosv1.ResultFailed, Reason: ImagePullFailedReason, Message: msg}
	return r.recordRunResult(ctx, ws, res, ImagePullFailedReason, retry)
}

// runnerPodEvents passes the events of runner Pods that the Workspace acts
// on: an image that cannot be pulled, and a Pod ending or going away (the
// run of a Job deleted while its Pod stopped ends with its Pod). Ordinary
// Pod updates do not wake the Workspace.
var runnerPodEvents = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return runnerPodWithPullFailure(e.Object) },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return runnerPodWithPullFailure(e.ObjectNew) || (runnerPod(e.ObjectNew) && podEnded(e.ObjectNew) && !podEnded(e.ObjectOld))
	},
	DeleteFunc:  func(e event.DeleteEvent) bool { return runnerPod(e.Object) },
	GenericFunc: func(e event.GenericEvent) bool { return runnerPodWithPullFailure(e.Object) },
}

func runnerPod(o client.Object) bool {
	_, ok := o.(*corev1.Pod)
	return ok && o.GetLabels()[magosv1.WorkspaceLabel] != ""
}

func runnerPodWithPullFailure(o client.Object) bool {
	return runnerPod(o) && pullFailure(o.(*corev1.Pod)) != ""
}

func podEnded(o client.Object) bool {
	pod, ok := o.(*corev1.Pod)
	return ok && (pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed)
}

// workspaceOfPod maps a runner Pod to its Workspace.
func workspaceOfPod(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[magosv1.WorkspaceLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}
