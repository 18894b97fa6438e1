package workspace

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/controllers/internal/rerror"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// reserveRunStorage creates, before a run, every object the runner writes,
// so that the runner's Role needs no create: with create on Secrets, config
// code could mint a token Secret for any ServiceAccount of the namespace.
// The state Secret carries the state labels and no owner (state outlives
// its Workspace), as does the errored-state Secret (with the run labels);
// both name the Workspace's UID (WorkspaceUIDAnnotation). The lock Lease,
// the plan chunk Secrets and the outputs Secret are owned by the Workspace. An existing object of one of those
// names that Magos did not create for this Workspace stalls it with
// StorageConflict.
func (r *Reconciler) reserveRunStorage(ctx context.Context, ws *magosv1.Workspace) (runjob.Storage, error) {
	st := runjob.Storage{}
	state := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: magosv1.StateSecretName(ws.Name), Namespace: ws.Namespace, Labels: magosv1.StateSecretLabels(ws.Name),
		Annotations: workspaceUID(ws),
	}, Type: corev1.SecretTypeOpaque}
	if _, err := r.reserve(ctx, ws, state, true); err != nil {
		return st, err
	}
	st.State = true
	lease := &coordinationv1.Lease{ObjectMeta: r.ownedMeta(ws, magosv1.LockLeaseName(ws.Name))}
	lease.Labels = magosv1.StateSecretLabels(ws.Name)
	if _, err := r.reserve(ctx, ws, lease, true); err != nil {
		return st, err
	}
	st.Lease = true
	// Like the state it may have to hold, the errored-state Secret has no
	// owner: it outlives the Workspace.
	errored := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: magosv1.ErroredStateSecretName(ws.Name), Namespace: ws.Namespace, Labels: runjob.Labels(ws),
		Annotations: workspaceUID(ws),
	}, Type: corev1.SecretTypeOpaque}
	if _, err := r.reserve(ctx, ws, errored, true); err != nil {
		return st, err
	}
	st.ErroredState = true
	// DefaultPlanChunks are created; more exist once a plan needed them.
	for st.PlanChunks < r.Options.PlanChunks() {
		res, err := r.reserve(ctx, ws, r.planChunk(ws, st.PlanChunks), st.PlanChunks < magosv1.DefaultPlanChunks)
		if err != nil {
			return st, err
		}
		if res == absent {
			break
		}
		st.PlanChunks++
	}
	if o := ws.Spec.Outputs; o != nil {
		out := &corev1.Secret{ObjectMeta: r.ownedMeta(ws, o.SecretName), Type: corev1.SecretTypeOpaque}
		if _, err := r.reserve(ctx, ws, out, true); err != nil {
			return st, err
		}
		st.Outputs = o.SecretName
	}
	return st, nil
}

// reservePlanChunks makes chunk Secrets 0..n-1 exist, for a plan that
// needed more than were reserved, and says how many it created.
func (r *Reconciler) reservePlanChunks(ctx context.Context, ws *magosv1.Workspace, n int) (int, error) {
	made := 0
	for i := range min(n, r.Options.PlanChunks()) {
		res, err := r.reserve(ctx, ws, r.planChunk(ws, i), true)
		if err != nil {
			return made, err
		}
		if res == created {
			made++
		}
	}
	return made, nil
}

func (r *Reconciler) planChunk(ws *magosv1.Workspace, i int) *corev1.Secret {
	s := planstore.EmptyChunk(ws.Name, i, planstore.WorkspaceOwner(ws.Name, string(ws.UID)))
	s.Namespace = ws.Namespace
	return s
}

// workspaceUID are the annotations of storage ws keeps without an owner.
func workspaceUID(ws *magosv1.Workspace) map[string]string {
	return map[string]string{magosv1.WorkspaceUIDAnnotation: string(ws.UID)}
}

// ownedMeta is the metadata of an object owned by ws: its labels and the
// owner reference the runner also writes (no blockOwnerDeletion).
func (r *Reconciler) ownedMeta(ws *magosv1.Workspace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, Namespace: ws.Namespace, Labels: runjob.Labels(ws),
		OwnerReferences: []metav1.OwnerReference{planstore.WorkspaceOwner(ws.Name, string(ws.UID))},
	}
}

// reservation is what reserve found or did.
type reservation int

const (
	// absent: the object does not exist and was not to be created.
	absent reservation = iota
	// existed: the object was there and belongs to the Workspace.
	existed
	// created: reserve created the object.
	created
)

// reserve makes sure want exists and belongs to ws. It reads uncached (the
// controller does not cache Secrets); a missing object is created when
// create is set.
func (r *Reconciler) reserve(ctx context.Context, ws *magosv1.Workspace, want client.Object, create bool) (reservation, error) {
	got := want.DeepCopyObject().(client.Object)
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		if !create {
			return absent, nil
		}
		if err := r.Create(ctx, want); err != nil {
			return absent, fmt.Errorf("creating %s %s for the runner: %w", kindOf(want), want.GetName(), err)
		}
		return created, nil
	}
	if err != nil {
		return absent, err
	}
	why, stamp := notOurs(ws, want, got)
	if why != "" {
		return existed, rerror.Stall(magosv1.ReasonStorageConflict, fmt.Errorf(
			"%s %s already exists and %s; Magos writes runs' state, plans and outputs only to objects it created for this Workspace (choose another spec.outputs.secretName, or remove the object)",
			kindOf(want), got.GetName(), why))
	}
	if stamp {
		// Taken over: from now on it names this Workspace. The update
		// carries got's resourceVersion, so an object changed or replaced
		// since it was read is not stamped.
		ann := got.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[magosv1.WorkspaceUIDAnnotation] = string(ws.UID)
		got.SetAnnotations(ann)
		if err := r.Update(ctx, got); err != nil {
			return existed, fmt.Errorf("recording Workspace %s's UID on %s %s: %w", ws.Name, kindOf(want), got.GetName(), err)
		}
	}
	return existed, nil
}

// notOurs says why got is not an object Magos created for ws, or "".
// Magos created it when ws controls it. An object without a controller
// (the state and errored-state Secrets, which outlive their Workspace, and
// Leases made by earlier versions) must carry the labels of ws's runs and
// be ws's by UID:
//   - it names ws's UID (WorkspaceUIDAnnotation): ours;
//   - ws adopts it by the object's own UID (AdoptStateAnnotation): ours,
//     and stamp says to record ws's UID on it;
//   - it names no UID and ws has run before: made for ws's earlier runs by
//     a version that recorded no UID; ours, stamped;
//   - otherwise (left by a deleted Workspace of the same name, or created
//     by someone else before ws's first run) it is not ws's, and the
//     reason says how to adopt it.
//
// A Secret must also have the type Magos gives it.
func notOurs(ws *magosv1.Workspace, want, got client.Object) (why string, stamp bool) {
	if w, ok := want.(*corev1.Secret); ok {
		if g := got.(*corev1.Secret); g.Type != w.Type {
			return fmt.Sprintf("has type %q, not %q", g.Type, w.Type), false
		}
	}
	if ref := metav1.GetControllerOf(got); ref != nil {
		if ref.UID == ws.UID && ref.Kind == magosv1.WorkspaceKind {
			return "", false
		}
		return fmt.Sprintf("belongs to %s %s", ref.Kind, ref.Name), false
	}
	l := got.GetLabels()
	if l[magosv1.ManagedByLabel] != magosv1.ManagedByValue || l[magosv1.WorkspaceLabel] != ws.Name {
		return "was not created by Magos for Workspace " + ws.Name, false
	}
	uid := got.GetAnnotations()[magosv1.WorkspaceUIDAnnotation]
	switch {
	case uid == string(ws.UID):
		return "", false
	case ws.Annotations[magosv1.AdoptStateAnnotation] == string(got.GetUID()):
		return "", true
	case uid == "" && ws.Status.Runs > 0:
		return "", true
	}
	adopt := fmt.Sprintf("to take it over as this Workspace's, annotate the Workspace %s=%s", magosv1.AdoptStateAnnotation, got.GetUID())
	if uid != "" {
		return fmt.Sprintf("was created for an earlier Workspace %s (UID %s), not this one (%s); %s", ws.Name, uid, ws.UID, adopt), false
	}
	return fmt.Sprintf("was not created for this Workspace (it names no Workspace UID and this Workspace has not run yet); %s", adopt), false
}

func kindOf(o client.Object) string {
	if _, ok := o.(*coordinationv1.Lease); ok {
		return "Lease"
	}
	return "Secret"
}

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
		check := &decide.UnlockCheck{Holder: *h}
		decide.RecordUnlockCheck(&ws.Status, check)
		return check, nil, nil
	}
	return &decide.UnlockCheck{}, lease, nil
}

// deleteLease deletes the lock Lease a person named (nil: it is gone),
// with a precondition on the version checkUnlock read.
func (r *Reconciler) deleteLease(ctx context.Context, lease *coordinationv1.Lease) error {
	if lease == nil {
		return nil
	}
	rv := lease.ResourceVersion
	if err := r.Delete(ctx, lease, client.Preconditions{UID: &lease.UID, ResourceVersion: &rv}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
