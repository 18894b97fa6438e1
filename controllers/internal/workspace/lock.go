package workspace

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
)

// lockHolder reads who holds the Workspace's state lock after a run failed
// or found it locked (a run that died mid-apply leaves it held): the
// Lease's holder, else the one the run reported; nil when no one does.
func (r *Reconciler) lockHolder(ctx context.Context, ws *magosv1.Workspace, reported string) (*magosv1.LockStatus, error) {
	lease := &coordinationv1.Lease{}
	key := types.NamespacedName{Namespace: ws.Namespace, Name: magosv1.LockLeaseName(ws.Name)}
	if err := r.APIReader.Get(ctx, key, lease); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	holder := reported
	if lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" {
		holder = *lease.Spec.HolderIdentity
	}
	if holder == "" {
		return nil, nil
	}
	lock := &magosv1.LockStatus{Holder: holder, Lease: lease.Name}
	if lease.Spec.AcquireTime != nil {
		since := metav1.NewTime(lease.Spec.AcquireTime.Time)
		lock.Since = &since
	}
	return lock, nil
}

// checkUnlock confirms, live, what a person's unlock request asserts: that
// no run of the Workspace is running (a Job or runner Pod still running may
// hold the lock, its Job deleted or missing from a stale cache) and that the
// Lease still has the holder named. It returns the Lease to delete, nil when
// it is gone.
func (r *Reconciler) checkUnlock(ctx context.Context, ws *magosv1.Workspace) (*decide.UnlockCheck, *coordinationv1.Lease, error) {
	job, pod, err := r.liveRun(ctx, ws)
	switch {
	case err != nil:
		return nil, nil, err
	case job != nil:
		return &decide.UnlockCheck{Running: "Job " + job.Name}, nil, nil
	case pod != nil:
		return &decide.UnlockCheck{Running: "runner Pod " + pod.Name}, nil, nil
	}
	lock := ws.Status.Lock
	lease := &coordinationv1.Lease{}
	err = r.APIReader.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: lock.Lease}, lease)
	if apierrors.IsNotFound(err) {
		return &decide.UnlockCheck{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" && *h != lock.Holder {
		ws.Status.Lock.Holder = *h
		return &decide.UnlockCheck{Holder: *h}, nil, nil
	}
	return &decide.UnlockCheck{}, lease, nil
}

// releaseLock deletes the lock Lease a person named (nil: it is gone),
// with a precondition on the version checkUnlock read, and clears the lock,
// the plan and the retry state: the Workspace plans afresh at once.
func (r *Reconciler) releaseLock(ctx context.Context, ws *magosv1.Workspace, lease *coordinationv1.Lease) error {
	if lease != nil {
		rv := lease.ResourceVersion
		if err := r.Delete(ctx, lease, client.Preconditions{UID: &lease.UID, ResourceVersion: &rv}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	r.event(ws, corev1.EventTypeNormal, magosv1.ReasonUnlocked, "Released the state lock held by %q", ws.Status.Lock.Holder)
	ws.Status.Lock, ws.Status.Plan, ws.Status.Retry = nil, nil, nil
	return nil
}
