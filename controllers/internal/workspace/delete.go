package workspace

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
)

// reconcileDelete runs the destroy a destroyOnDelete Workspace owes before
// it goes. It never hangs on a missing dependency: without a source artifact
// the destroy is skipped with a warning event and the state Secret is kept;
// a failed destroy stalls with DestroyFailed until destroyOnDelete is unset
// or the cause is fixed (the next reconcile retries after the retry interval).
func (r *Reconciler) reconcileDelete(ctx context.Context, ws *magosv1.Workspace, obs *observation) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(ws, DestroyFinalizer) {
		return ctrl.Result{}, nil
	}
	if !ws.Spec.DestroyOnDelete || ws.Status.LastApplied == nil {
		return ctrl.Result{}, r.removeFinalizer(ctx, ws)
	}

	busy, err := r.reconcileCurrentRun(ctx, ws, obs)
	if err != nil || busy {
		return ctrl.Result{}, err
	}
	if last := latestRun(ws); last != nil && last.Phase == magosv1.RunDestroy {
		if last.Result == magosv1.ResultSucceeded {
			return ctrl.Result{}, r.removeFinalizer(ctx, ws)
		}
		if wait, ok := r.retryWait(ws, last.Revision, last.InputsDigest); ok {
			obs.Phase, obs.Reason = magosv1.PhaseFailed, DestroyFailedReason
			obs.Message = fmt.Sprintf("The destroy run %s failed: %s; retrying in %s (unset spec.destroyOnDelete to delete the Workspace and leave the resources)",
				last.Job, last.Message, wait.Round(1e9))
			return requeueAfter(wait), nil
		}
	}

	art, err := fluxsource.Fetch(ctx, r.Client, ws)
	var notReady fluxsource.NotReadyError
	if errors.As(err, &notReady) {
		r.event(ws, corev1.EventTypeWarning, "DestroySkipped",
			"Cannot destroy: %s; the Workspace is deleted, its resources and state Secret %s are left in place",
			notReady.Msg, magosv1.StateSecretName(ws.Name))
		return ctrl.Result{}, r.removeFinalizer(ctx, ws)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	in, err := r.resolveInputs(ctx, ws)
	var s settings
	if err == nil {
		s, err = r.effectiveSettings(ws, in)
	}
	if err != nil {
		r.event(ws, corev1.EventTypeWarning, "DestroySkipped",
			"Cannot destroy: %s; the Workspace is deleted, its resources and state Secret %s are left in place",
			err.Error(), magosv1.StateSecretName(ws.Name))
		return ctrl.Result{}, r.removeFinalizer(ctx, ws)
	}
	return ctrl.Result{}, r.startRun(ctx, ws, run{Phase: magosv1.RunDestroy, Artifact: art}, inputsDigest(ws, s, in.SetDigests), s, obs)
}

// latestRun is the newest finished run, if any.
func latestRun(ws *magosv1.Workspace) *magosv1.RunStatus {
	if len(ws.Status.History) == 0 {
		return nil
	}
	return &ws.Status.History[0]
}
