package workspace

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
)

// reconcileDelete destroys the resources of a deleted destroyOnDelete
// Workspace before it goes, through the same gate as any change: a destroy
// plan (plan -destroy) stored like any plan, the policy gate on that plan,
// approval under approval: Manual, then an apply of exactly that plan. Only
// where the Workspace's destroy gate is Skip and the cluster allows it
// (--allow-destroy-skip-gate) does it run destroy directly. No Rollout gates
// a destroy.
//
// It never hangs on a missing dependency: without a source artifact, or when
// a guard refuses the Workspace or its inputs cannot be resolved, the
// destroy is skipped with a DestroySkipped warning and the state Secret is
// kept. A destroy the policy gate blocks or that awaits approval keeps the
// finalizer, as does a failed run (DestroyFailed, retried after the retry
// interval); unsetting destroyOnDelete lets the Workspace go and leaves the
// resources in place.
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
	if held, err := r.reconcileLock(ctx, ws, obs); err != nil || held {
		return ctrl.Result{}, err
	}
	if last := latestRun(ws); last != nil && deletionRun(last) {
		if destroyed(last) {
			return ctrl.Result{}, r.removeFinalizer(ctx, ws)
		}
		if wait, ok := r.retryWait(ws, last.Revision, last.InputsDigest); ok {
			obs.Phase, obs.Reason = magosv1.PhaseFailed, DestroyFailedReason
			obs.Message = fmt.Sprintf("The %s run %s failed: %s; retrying in %s (unset spec.destroyOnDelete to delete the Workspace and leave the resources)",
				runKind(last.Phase, last.Mode, false), last.Job, last.Message, wait.Round(time.Second))
			return requeueAfter(wait), nil
		}
	}

	art, err := fluxsource.Fetch(ctx, r.Client, ws)
	var notReady fluxsource.NotReadyError
	if errors.As(err, &notReady) {
		return ctrl.Result{}, r.skipDestroy(ctx, ws, notReady.Msg)
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
		return ctrl.Result{}, r.skipDestroy(ctx, ws, err.Error())
	}
	obs.Revision = art.Revision
	inputs := inputsDigest(ws, s, in.SetDigests)
	ws.Status.InputsDigest = inputs
	ws.Status.Source = &magosv1.SourceStatus{URL: art.URL, Revision: art.Revision, Digest: art.Digest}

	skip, refused := r.Options.Guards.skipsDestroyGate(s.DestroyGate)
	if skip {
		return ctrl.Result{}, r.startRun(ctx, ws, run{Phase: magosv1.RunDestroy, Artifact: art}, inputs, s, obs)
	}
	return r.reconcileDestroyPlan(ctx, ws, art, inputs, s, in.Project, refused, obs)
}

// reconcileDestroyPlan plans the destroy of a deleted Workspace, evaluates
// the policy gate on that plan and applies it once it passed and, under
// approval: Manual, is approved. A destroy plan is made again when the
// revision or inputs change, as any plan is. It decides obs.Phase:
// Planning, Validating, Failed (the gate blocks; PolicyPassed says why),
// AwaitingApproval (DestroyAwaitingApproval) or Destroying.
func (r *Reconciler) reconcileDestroyPlan(ctx context.Context, ws *magosv1.Workspace, art artifact, inputs string, s settings,
	project *magosv1.Project, gateRefused bool, obs *observation) (ctrl.Result, error) {
	plan := ws.Status.Plan
	if plan == nil || plan.Mode != magosv1.PlanModeDestroy || plan.Revision != art.Revision || plan.InputsDigest != inputs {
		if gateRefused {
			r.event(ws, corev1.EventTypeWarning, DestroyGateEnforcedReason,
				"spec.destroy.gate is Skip, but this cluster does not allow skipping the destroy gate (--allow-destroy-skip-gate); the destroy is planned, checked by policy and approved like any plan")
		}
		return ctrl.Result{}, r.startRun(ctx, ws, run{Phase: magosv1.RunPlan, Mode: magosv1.PlanModeDestroy, Artifact: art}, inputs, s, obs)
	}
	if !plan.HasChanges {
		r.event(ws, corev1.EventTypeNormal, DestroyedReason, "Destroy plan %s of revision %s has no changes: nothing is left to destroy", plan.ID, plan.Revision)
		return ctrl.Result{}, r.removeFinalizer(ctx, ws)
	}

	if stop, res, err := r.gatePlan(ctx, ws, project, obs, destroyBlockedMessage); stop {
		return res, err
	}

	if s.Approval == magosv1.ApprovalManual && ws.Spec.ApprovedPlan != plan.ID {
		if ready := conditions.Get(ws, magosv1.ReadyCondition); ws.Status.Phase != magosv1.PhaseAwaitingApproval || ready == nil || ready.Reason != DestroyAwaitingApprovalReason {
			r.event(ws, corev1.EventTypeNormal, DestroyAwaitingApprovalReason, "The Workspace is being deleted: destroy plan %s (%s) awaits approval", plan.ID, PlanSummary(plan))
		}
		obs.Phase, obs.Reason = magosv1.PhaseAwaitingApproval, DestroyAwaitingApprovalReason
		obs.Message = destroyApprovalMessage(plan)
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.startRun(ctx, ws, run{Phase: magosv1.RunApply, Mode: magosv1.PlanModeDestroy, Artifact: art, PlanID: plan.ID, PlanDigest: plan.Digest}, inputs, s, obs)
}

// skipDestroy lets a deleted Workspace go without a destroy, saying why.
func (r *Reconciler) skipDestroy(ctx context.Context, ws *magosv1.Workspace, why string) error {
	r.event(ws, corev1.EventTypeWarning, DestroySkippedReason,
		"Cannot destroy: %s; the Workspace is deleted, its resources and state Secret %s are left in place",
		why, magosv1.StateSecretName(ws.Name))
	return r.removeFinalizer(ctx, ws)
}

// latestRun is the newest finished run, if any.
func latestRun(ws *magosv1.Workspace) *magosv1.RunStatus {
	if len(ws.Status.History) == 0 {
		return nil
	}
	return &ws.Status.History[0]
}

// deletionRun says whether rs is one of a deletion's runs: a destroy plan,
// its apply or a destroy without a plan.
func deletionRun(rs *magosv1.RunStatus) bool {
	return rs.Phase == magosv1.RunDestroy || rs.Mode == magosv1.PlanModeDestroy
}

// destroyed says whether rs destroyed the Workspace's resources: a
// succeeded destroy, or a succeeded apply of a destroy plan.
func destroyed(rs *magosv1.RunStatus) bool {
	if rs.Result != magosv1.ResultSucceeded {
		return false
	}
	return rs.Phase == magosv1.RunDestroy || (rs.Phase == magosv1.RunApply && rs.Mode == magosv1.PlanModeDestroy)
}
