package workspace

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// observeLock records in status who holds the Workspace's state lock after
// a run failed or found it locked; a run that died mid-apply leaves it held.
func (r *Reconciler) observeLock(ctx context.Context, ws *magosv1.Workspace, reported string) error {
	lease := &coordinationv1.Lease{}
	key := types.NamespacedName{Namespace: ws.Namespace, Name: magosv1.LockLeaseName(ws.Name)}
	if err := r.APIReader.Get(ctx, key, lease); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	holder := reported
	if lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" {
		holder = *lease.Spec.HolderIdentity
	}
	if holder == "" {
		return nil
	}
	ws.Status.Lock = &magosv1.LockStatus{Holder: holder, Lease: lease.Name}
	if lease.Spec.AcquireTime != nil {
		since := metav1.NewTime(lease.Spec.AcquireTime.Time)
		ws.Status.Lock.Since = &since
	}
	return nil
}

// reconcileLock keeps a Workspace with a stuck state lock from running until
// someone sets the magos.dev/unlock annotation to the holder shown in
// status.lock.holder; then it deletes the lock Lease and plans afresh.
func (r *Reconciler) reconcileLock(ctx context.Context, ws *magosv1.Workspace, obs *observation) (bool, error) {
	lock := ws.Status.Lock
	if lock == nil {
		return false, nil
	}
	if ws.Annotations[UnlockAnnotation] != lock.Holder {
		obs.Phase, obs.Reason = magosv1.PhaseFailed, StateLockedReason
		obs.Message = fmt.Sprintf("The state lock (Lease %s) is held by %q, left by a run that did not finish; "+
			"once no run is using the state, release it with: kubectl annotate workspace %s %s=%s --overwrite",
			lock.Lease, lock.Holder, ws.Name, UnlockAnnotation, lock.Holder)
		return true, nil
	}
	// The person confirmed that no run uses the state; the controller
	// checks too, live: a Job or runner Pod of the Workspace still running
	// may hold the lock (its Job deleted, or missing from a stale cache).
	job, pod, err := r.liveRun(ctx, ws)
	if err != nil {
		return true, err
	}
	if job != nil || pod != nil {
		var what string
		if job != nil {
			what = "Job " + job.Name
		} else {
			what = "runner Pod " + pod.Name
		}
		obs.Phase, obs.Reason = magosv1.PhaseFailed, StateLockedReason
		obs.Message = fmt.Sprintf("Not releasing the state lock (Lease %s) held by %q: %s of this Workspace is still running and may hold it; "+
			"the unlock waits until it has ended", lock.Lease, lock.Holder, what)
		return true, nil
	}
	// Only the lock the person named is released: the Lease is deleted
	// with a precondition on the version that still has that holder.
	lease := &coordinationv1.Lease{}
	err = r.APIReader.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: lock.Lease}, lease)
	if err != nil && !apierrors.IsNotFound(err) {
		return true, err
	}
	if err == nil {
		if h := lease.Spec.HolderIdentity; h != nil && *h != "" && *h != lock.Holder {
			ws.Status.Lock.Holder = *h
			obs.Phase, obs.Reason = magosv1.PhaseFailed, StateLockedReason
			obs.Message = fmt.Sprintf("Not releasing the state lock (Lease %s): it is now held by %q, not %q; "+
				"once no run is using the state, release it with: kubectl annotate workspace %s %s=%s --overwrite",
				lock.Lease, *h, lock.Holder, ws.Name, UnlockAnnotation, *h)
			return true, nil
		}
		rv := lease.ResourceVersion
		if err := r.Delete(ctx, lease, client.Preconditions{UID: &lease.UID, ResourceVersion: &rv}); err != nil && !apierrors.IsNotFound(err) {
			return true, err
		}
	}
	r.event(ws, corev1.EventTypeNormal, UnlockedReason, "Released the state lock held by %q", lock.Holder)
	ws.Status.Lock = nil
	ws.Status.Plan = nil
	if len(ws.Status.History) > 0 {
		ws.Status.History[0].Result = "Unlocked" // do not wait out the retry interval
	}
	return false, nil
}

// reconcileErroredState keeps a Workspace whose run changed real resources
// but could not write their state back from running (Stalled,
// StateNotSaved): a plan against the stale state Secret would create them
// again. Once someone has restored the state and set the
// magos.dev/state-restored annotation to the run's Job, it plans afresh.
func (r *Reconciler) reconcileErroredState(ctx context.Context, ws *magosv1.Workspace, obs *observation) bool {
	es := ws.Status.ErroredState
	if es == nil {
		return false
	}
	if ws.Annotations[StateRestoredAnnotation] == es.Job {
		ctrl.LoggerFrom(ctx).Info("The state was restored; planning again", "job", es.Job)
		r.event(ws, corev1.EventTypeNormal, StateRestoredReason, "The state of run %s was marked restored; planning again", es.Job)
		ws.Status.ErroredState = nil
		ws.Status.Plan = nil
		if len(ws.Status.History) > 0 && ws.Status.History[0].Job == es.Job {
			ws.Status.History[0].Result = StateRestoredReason // not a failure to retry or stall on
		}
		return false
	}
	obs.Phase, obs.Reason = magosv1.PhaseFailed, magosv1.ReasonStateNotSaved
	restore := fmt.Sprintf("the state the engine could not write back is in Secret %s (key %s, gzip'd state JSON): "+
		"push it to the state (e.g. kubectl get secret %s -o jsonpath='{.data.%s}' | base64 -d | gunzip > errored.tfstate, then tofu state push errored.tfstate "+
		"with this configuration, or copy the key into Secret %s)",
		es.Secret, magosv1.StateKey, es.Secret, magosv1.StateKey, es.StateSecret)
	if es.Secret == "" {
		restore = "the state could not be saved either: import the resources the run created into the state, or remove them by hand"
	}
	obs.Message = fmt.Sprintf("Run %s changed real resources but could not write their state to Secret %s, and no run starts until it is restored: %s; "+
		"then run: kubectl annotate workspace %s %s=%s --overwrite",
		es.Job, es.StateSecret, restore, ws.Name, StateRestoredAnnotation, es.Job)
	return true
}
