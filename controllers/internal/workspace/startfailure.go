package workspace

import (
	"context"
	"fmt"
	"slices"

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
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
)

// startFailureReasons are the kubelet's waiting reasons of a container that
// will not start as it is, each with the run's failure reason: an image it
// cannot get, or a container it cannot create. The kubelet keeps retrying
// them until the Pod's deadline.
var startFailureReasons = map[string]string{
	"ErrImagePull":               magosv1.ReasonImagePullFailed,
	"ImagePullBackOff":           magosv1.ReasonImagePullFailed,
	"InvalidImageName":           magosv1.ReasonImagePullFailed,
	"ErrImageNeverPull":          magosv1.ReasonImagePullFailed,
	"ImageInspectError":          magosv1.ReasonImagePullFailed,
	"CreateContainerConfigError": magosv1.ReasonRunStartFailed,
	"CreateContainerError":       magosv1.ReasonRunStartFailed,
}

// startFailure describes the first container of pod, init containers
// first, that will not start, and the run's failure reason; "" when there
// is none.
func startFailure(pod *corev1.Pod) (reason, msg string) {
	check := func(kind string, statuses []corev1.ContainerStatus) (string, string) {
		for _, cs := range statuses {
			w := cs.State.Waiting
			if w == nil || startFailureReasons[w.Reason] == "" {
				continue
			}
			reason := startFailureReasons[w.Reason]
			msg := fmt.Sprintf("%scontainer %q of Pod %s cannot pull image %s (%s)", kind, cs.Name, pod.Name, cs.Image, w.Reason)
			if reason == magosv1.ReasonRunStartFailed {
				msg = fmt.Sprintf("%scontainer %q of Pod %s cannot be created (%s)", kind, cs.Name, pod.Name, w.Reason)
			}
			if w.Message != "" {
				msg += ": " + w.Message
			}
			return reason, msg
		}
		return "", ""
	}
	if reason, msg := check("init ", pod.Status.InitContainerStatuses); reason != "" {
		return reason, msg
	}
	return check("", pod.Status.ContainerStatuses)
}

// jobPods are the Pods job controls, as the cache has them.
func (r *Reconciler) jobPods(ctx context.Context, job *batchv1.Job) ([]corev1.Pod, error) {
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(job.Namespace), client.MatchingLabels{"job-name": job.Name}); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return !metav1.IsControlledBy(&p, job) }), nil
}

// failOnStartError ends the running Job whose Pod (of pods, jobPods) will
// not start: it deletes the Job (its Pod goes with it) and records the run
// as failed with ImagePullFailed or RunStartFailed and the kubelet's
// message.
func (r *Reconciler) failOnStartError(ctx context.Context, ws *magosv1.Workspace, job *batchv1.Job, pods []corev1.Pod, retry decide.RetryPolicy) error {
	reason, msg := "", ""
	for i := range pods {
		if reason, msg = startFailure(&pods[i]); reason != "" {
			break
		}
	}
	if reason == "" {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Ending a run whose Pod will not start", "job", job.Name, "reason", reason, "message", msg)
	err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &job.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Job %s: %w", job.Name, err)
	}
	res := magosv1.RunResult{Phase: ws.Status.CurrentRun.Phase, Result: magosv1.ResultFailed, Reason: reason, Message: msg}
	return r.recordRunResult(ctx, ws, res, reason, retry)
}

// runnerPodEvents passes the events of runner Pods that the Workspace acts
// on: a container that will not start, and a Pod ending or going away (the
// run of a Job deleted while its Pod stopped ends with its Pod). Ordinary
// Pod updates do not wake the Workspace.
var runnerPodEvents = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return runnerPodWithStartFailure(e.Object) },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return runnerPodWithStartFailure(e.ObjectNew) || (runnerPod(e.ObjectNew) && podEnded(e.ObjectNew) && !podEnded(e.ObjectOld))
	},
	DeleteFunc:  func(e event.DeleteEvent) bool { return runnerPod(e.Object) },
	GenericFunc: func(e event.GenericEvent) bool { return runnerPodWithStartFailure(e.Object) },
}

func runnerPod(o client.Object) bool {
	_, ok := o.(*corev1.Pod)
	return ok && o.GetLabels()[magosv1.WorkspaceLabel] != ""
}

func runnerPodWithStartFailure(o client.Object) bool {
	if !runnerPod(o) {
		return false
	}
	reason, _ := startFailure(o.(*corev1.Pod))
	return reason != ""
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
