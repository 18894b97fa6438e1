package executor

import (
	"context"
	"io"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kubelet runs the Pods bound to the executor's node: one process per Pod,
// started once.
type kubelet struct {
	// ctx outlives single reconciles: the runs' processes live in it.
	ctx       context.Context
	client    client.Client
	reader    client.Reader
	cfg       *rest.Config
	opts      Options
	runs      *registry
	events    events.EventRecorder
	log       logr.Logger
	logOutput io.Writer
	// slots holds one token per running process when Options.MaxProcesses
	// caps them; nil means no cap.
	slots chan struct{}
	// cpu adds up the CPU time of the processes that ended.
	cpu cpuMeter
}

// Reconcile takes a Pod on, reports a lost process, or carries out a
// graceful deletion.
func (k *kubelet) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pod := &corev1.Pod{}
	if err := k.client.Get(ctx, req.NamespacedName, pod); err != nil {
		if apierrors.IsNotFound(err) {
			k.forgetGone(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if pod.Spec.NodeName != k.opts.NodeName {
		return ctrl.Result{}, nil
	}
	r := k.runs.get(pod.UID)

	switch {
	case isPodTerminal(pod):
		if r != nil && !r.isDone() {
			// The final status is written; the run is closing.
			return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
		}
		k.runs.forget(pod.UID)
		if pod.DeletionTimestamp != nil {
			return ctrl.Result{}, k.deleteNow(ctx, pod)
		}
		return ctrl.Result{}, nil

	case r != nil:
		if pod.DeletionTimestamp != nil && !r.isDone() {
			r.requestStop(stopRequest{Grace: deletionGrace(pod)})
		}
		return ctrl.Result{}, nil
	}

	now := metav1.Now().Rfc3339Copy()
	if s, ok := k.runs.pendingStop(pod.UID); ok {
		return ctrl.Result{}, k.finishUnstarted(ctx, pod, podOutcome{Failed: true, Reason: s.Reason, Message: s.Message}, now)
	}
	if pod.DeletionTimestamp != nil {
		return ctrl.Result{}, k.finishUnstarted(ctx, pod, podOutcome{Failed: true}, now)
	}
	if wasStarted(pod) {
		k.log.Info("Failing a Pod whose process was lost", "pod", req.NamespacedName)
		return ctrl.Result{}, k.finishUnstarted(ctx, pod, lostOutcome(pod, now), now)
	}
	return ctrl.Result{}, k.start(ctx, pod, now)
}

// start claims a new Pod by writing its starting status (a conflict means
// someone else changed it: the next event decides again), then runs it.
func (k *kubelet) start(ctx context.Context, pod *corev1.Pod, now metav1.Time) error {
	if len(pod.Spec.Containers) != 1 {
		msg := "the local executor runs Pods of exactly one container"
		return k.finishUnstarted(ctx, pod, podOutcome{Failed: true, Reason: "Unsupported", Message: msg}, now)
	}
	claimed := pod.DeepCopy()
	claimed.Status = startingStatus(pod, now)
	if err := k.client.Status().Update(ctx, claimed); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	key := client.ObjectKeyFromObject(pod)
	r := newRun(key, pod.UID, controllingJob(pod))
	k.runs.add(r)
	go k.runPod(k.ctx, r, claimed)
	return nil
}

// finishUnstarted writes the terminal status of a Pod with no process.
func (k *kubelet) finishUnstarted(ctx context.Context, pod *corev1.Pod, out podOutcome, now metav1.Time) error {
	err := k.updatePodStatus(ctx, client.ObjectKeyFromObject(pod), pod.UID, func(st *corev1.PodStatus) {
		if st.StartTime == nil {
			*st = startingStatus(pod, now)
		}
		setFinished(st, out, now)
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// lostOutcome fails a Pod that an earlier executor started and lost.
func lostOutcome(pod *corev1.Pod, now metav1.Time) podOutcome {
	out := podOutcome{
		Failed:  true,
		Reason:  ReasonExecutorRestarted,
		Message: "The executor restarted while the Pod's process ran; the process is gone and is not started again",
	}
	if cs := pod.Status.ContainerStatuses; len(cs) > 0 && cs[0].State.Running != nil {
		out.Terminated = &corev1.ContainerStateTerminated{
			ExitCode:    137,
			Reason:      ReasonContainerStatusUnknown,
			Message:     "The container could not be located when the pod was terminated",
			StartedAt:   cs[0].State.Running.StartedAt,
			FinishedAt:  now,
			ContainerID: cs[0].ContainerID,
		}
	}
	return out
}

// forgetGone kills the process of a Pod that was removed without a graceful
// deletion.
func (k *kubelet) forgetGone(key types.NamespacedName) {
	for _, r := range k.runs.all() {
		if r.pod == key {
			r.requestStop(stopRequest{Kill: true, Failed: true})
		}
	}
}

// deleteNow completes a graceful deletion, as the kubelet does once the
// Pod's containers are gone.
func (k *kubelet) deleteNow(ctx context.Context, pod *corev1.Pod) error {
	err := k.client.Delete(ctx, pod, client.GracePeriodSeconds(0), client.Preconditions{UID: &pod.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// updatePodStatus applies mutate to the Pod's latest status.
func (k *kubelet) updatePodStatus(ctx context.Context, key types.NamespacedName, uid types.UID, mutate func(*corev1.PodStatus)) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		pod := &corev1.Pod{}
		if err := k.reader.Get(ctx, key, pod); err != nil {
			return err
		}
		if pod.UID != uid {
			return apierrors.NewNotFound(corev1.Resource("pods"), key.Name)
		}
		mutate(&pod.Status)
		return k.client.Status().Update(ctx, pod)
	})
}

// deletionGrace is the grace period of a Pod being deleted.
func deletionGrace(pod *corev1.Pod) time.Duration {
	if s := pod.DeletionGracePeriodSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	if s := pod.Spec.TerminationGracePeriodSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return 30 * time.Second
}

// controllingJob is the Job that controls a Pod, if any.
func controllingJob(pod *corev1.Pod) types.NamespacedName {
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "Job" {
		return types.NamespacedName{Namespace: pod.Namespace, Name: ref.Name}
	}
	return types.NamespacedName{}
}
