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

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// The controller's cache lags the apiserver: a Job it just created may be
// missing from it, and a status patch that lost an optimistic-lock race
// leaves status.currentRun unset although the Job was created. Decisions
// that would start a second run, record a live run as gone or release a
// lock a run may hold are therefore confirmed with live reads (APIReader):
// they are rare, so the extra requests are cheap.

// liveRun finds, with live reads, a run of ws still in progress: a Job of
// ws that is not finished and not yet in the history, or else a runner Pod
// of ws that has not ended (one whose Job was deleted, or deleted with
// orphan propagation, may still be using the state).
func (r *Reconciler) liveRun(ctx context.Context, ws *magosv1.Workspace) (*batchv1.Job, *corev1.Pod, error) {
	var jobs batchv1.JobList
	if err := r.APIReader.List(ctx, &jobs, client.InNamespace(ws.Namespace), client.MatchingLabels{magosv1.WorkspaceLabel: ws.Name}); err != nil {
		return nil, nil, fmt.Errorf("listing the Workspace's Jobs: %w", err)
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if !metav1.IsControlledBy(job, ws) || job.DeletionTimestamp != nil || recorded(ws, job.Name) {
			continue
		}
		if done, _ := runjob.Finished(job); !done {
			return job, nil, nil
		}
	}
	pod, err := r.livePod(ctx, ws, client.MatchingLabels{magosv1.WorkspaceLabel: ws.Name})
	return nil, pod, err
}

// livePod is a runner Pod of ws matching sel that has not ended, read live.
func (r *Reconciler) livePod(ctx context.Context, ws *magosv1.Workspace, sel client.MatchingLabels) (*corev1.Pod, error) {
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(ws.Namespace), sel); err != nil {
		return nil, fmt.Errorf("listing the Workspace's runner Pods: %w", err)
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Labels[magosv1.WorkspaceLabel] != ws.Name {
			continue
		}
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			return p, nil
		}
	}
	return nil, nil
}

// liveJob reads Job name of ws live; nil when it is gone or not ws's.
func (r *Reconciler) liveJob(ctx context.Context, ws *magosv1.Workspace, name string) (*batchv1.Job, error) {
	job := &batchv1.Job{}
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: name}, job)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Job %s: %w", name, err)
	}
	if !metav1.IsControlledBy(job, ws) {
		return nil, nil
	}
	return job, nil
}

// findLiveRun looks, with live reads, for a run in progress that the cache
// did not show: a Job it adopts into f.Running (and status), or a runner
// Pod that has not ended (f.LivePod). It reports whether it found either:
// then no run may start.
func (r *Reconciler) findLiveRun(ctx context.Context, ws *magosv1.Workspace, f *decide.Facts) (bool, error) {
	job, pod, err := r.liveRun(ctx, ws)
	if err != nil {
		return false, err
	}
	switch {
	case job != nil:
		ctrl.LoggerFrom(ctx).Info("Adopting a run in progress that the cache did not show", "job", job.Name)
		f.Running = runjob.Adopt(ws, job)
		return true, nil
	case pod != nil:
		// The Pod's end (or removal) wakes the Workspace.
		f.LivePod = &decide.LivePod{Name: pod.Name, Phase: pod.Labels[magosv1.PhaseLabel]}
		return true, nil
	}
	return false, nil
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
		if reason, msg = runjob.StartFailure(&pods[i]); reason != "" {
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
