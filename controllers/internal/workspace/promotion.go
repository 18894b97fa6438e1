package workspace

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rollout"
)

// AwaitingPromotionReason: a Rollout has not admitted the plan's revision
// to the Workspace's stage yet.
const AwaitingPromotionReason = "AwaitingPromotion"

// awaitPromotion asks the Rollout governing the Workspace's Project, from
// its status alone, whether plan may be applied now. While it may not, the
// Workspace is AwaitingPromotion with the Rollout's reason, and
// awaitPromotion reports true.
func (r *Reconciler) awaitPromotion(ctx context.Context, ws *magosv1.Workspace, plan *magosv1.PlanStatus, obs *observation) (bool, error) {
	if ws.Spec.ProjectRef == nil {
		return false, nil
	}
	var list magosv1.RolloutList
	if err := r.List(ctx, &list, client.InNamespace(ws.Namespace)); err != nil {
		return false, fmt.Errorf("listing Rollouts: %w", err)
	}
	d := rollout.Admission(rollout.Governing(list.Items, ws.Spec.ProjectRef.Name), ws, plan.Revision)
	if d.Allowed {
		return false, nil
	}
	if ws.Status.Phase != magosv1.PhaseAwaitingPromotion {
		r.event(ws, corev1.EventTypeNormal, AwaitingPromotionReason, "Plan %s of revision %s: %s", plan.ID, plan.Revision, d.Message)
	}
	obs.Phase, obs.Reason = magosv1.PhaseAwaitingPromotion, AwaitingPromotionReason
	obs.Message = fmt.Sprintf("Plan %s (%s) of revision %s: %s", plan.ID, PlanSummary(plan), plan.Revision, d.Message)
	return true, nil
}

// workspacesForRollout maps a Rollout to the Workspaces its status may
// release: those awaiting promotion in its namespace and those it admits.
func (r *Reconciler) workspacesForRollout(ctx context.Context, o client.Object) []reconcile.Request {
	ro := o.(*magosv1.Rollout)
	var list magosv1.WorkspaceList
	if err := r.List(ctx, &list, client.InNamespace(ro.Namespace)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list Workspaces for a Rollout", "rollout", ro.Name)
		return nil
	}
	admitted := map[string]bool{}
	for _, st := range ro.Status.Stages {
		for _, name := range st.AdmittedWorkspaces {
			admitted[name] = true
		}
	}
	var reqs []reconcile.Request
	for _, ws := range list.Items {
		if ws.Status.Phase == magosv1.PhaseAwaitingPromotion || admitted[ws.Name] {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ws.Namespace, Name: ws.Name}})
		}
	}
	return reqs
}
