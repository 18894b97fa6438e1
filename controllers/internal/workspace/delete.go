package workspace

import (
	"context"
	"errors"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
)

// reconcileDelete destroys the resources of a deleted destroyOnDelete
// Workspace before it goes, through the same gate as any change: a destroy
// plan (plan -destroy) stored like any plan, the policy gate on that plan,
// approval under approval: Manual, then an apply of exactly that plan. Only
// where the Workspace's destroy gate is Skip and the cluster allows it
// (--allow-destroy-skip-gate) does it run destroy directly. No Rollout gates
// a destroy.
//
// A PlanOnly Workspace is let go without a destroy (DestroySkipped).
//
// It never hangs on a missing dependency: without a source artifact, or when
// a guard refuses the Workspace or its inputs cannot be resolved, the
// destroy is skipped with a DestroySkipped warning and the state Secret is
// kept. A destroy the policy gate blocks or that awaits approval keeps the
// finalizer, as does a failed run (DestroyFailed, retried after the retry
// interval); unsetting destroyOnDelete lets the Workspace go and leaves the
// resources in place.
func (r *Reconciler) reconcileDelete(ctx context.Context, ws *magosv1.Workspace, obs *decide.Observation) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(ws, DestroyFinalizer) {
		return ctrl.Result{}, nil
	}
	if !ws.Spec.DestroyOnDelete || ws.Status.LastApplied == nil {
		return ctrl.Result{}, r.removeFinalizer(ctx, ws)
	}
	if ws.Spec.Mode == magosv1.ModePlanOnly {
		// A PlanOnly Workspace never changes resources: deleting it does
		// not destroy them either (who may only plan may not destroy by
		// deleting).
		r.notes(ws, []decide.Note{decide.PlanOnlyNotDestroyed(ws.Name)})
		if err := r.removeFinalizer(ctx, ws); err != nil {
			return ctrl.Result{}, err
		}
		r.reportNow()
		return ctrl.Result{}, nil
	}
	del := &decide.DeletionFacts{}
	art, err := fluxsource.Fetch(ctx, r.Client, ws)
	var notReady fluxsource.NotReadyError
	switch {
	case errors.As(err, &notReady):
		del.Skip = notReady.Msg
	case err != nil:
		return ctrl.Result{}, err
	}
	var s settings
	in, err := r.resolveInputs(ctx, ws)
	if err == nil {
		s, err = r.effectiveSettings(ws, in)
	}
	if err != nil && del.Skip == "" {
		del.Skip = err.Error()
	}
	del.SkipGate, del.GateRefused = r.Options.Guards.SkipsDestroyGate(s.DestroyGate)
	obs.Revision = art.Revision
	return r.reconcileRuns(ctx, ws, art, s, in, del, obs)
}

// finishDeletion lets a deleted Workspace go: its resources are destroyed,
// or (DestroySkipped) they cannot be and are left in place with the state.
// Removing the finalizer deletes the Workspace, so no status is written
// after it: what this reconcile recorded is reported once it is removed.
func (r *Reconciler) finishDeletion(ctx context.Context, ws *magosv1.Workspace, d decide.Decision) error {
	r.notes(ws, decide.DeletionNotes(ws.Name, d))
	if err := r.removeFinalizer(ctx, ws); err != nil {
		return err
	}
	r.reportNow()
	return nil
}
