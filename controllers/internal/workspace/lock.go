package workspace

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

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
	lease := &coordinationv1.Lease{}
	lease.Namespace, lease.Name = ws.Namespace, lock.Lease
	if err := r.Delete(ctx, lease); err != nil && !apierrors.IsNotFound(err) {
		return true, err
	}
	r.event(ws, corev1.EventTypeNormal, UnlockedReason, "Released the state lock held by %q", lock.Holder)
	ws.Status.Lock = nil
	ws.Status.Plan = nil
	if len(ws.Status.History) > 0 {
		ws.Status.History[0].Result = "Unlocked" // do not wait out the retry interval
	}
	return false, nil
}
