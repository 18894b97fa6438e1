package workspace

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/index"
)

// workspacesWithPendingPlans maps a policy change to the Workspaces whose
// plan is not applied yet, so the gate re-evaluates them.
func (r *Reconciler) workspacesWithPendingPlans(ctx context.Context, o client.Object) []reconcile.Request {
	var list magosv1.WorkspaceList
	opts := []client.ListOption{}
	if o.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(o.GetNamespace()))
	}
	if err := r.List(ctx, &list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list Workspaces for a policy change")
		return nil
	}
	var reqs []reconcile.Request
	for _, ws := range list.Items {
		if ws.Status.PendingPlan() != nil {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ws.Namespace, Name: ws.Name}})
		}
	}
	return reqs
}

// workspacesInNamespace maps a Project or VariableSet change to the
// Workspaces of its namespace; each re-resolves its inputs.
func (r *Reconciler) workspacesInNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	var list magosv1.WorkspaceList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list Workspaces", "namespace", o.GetNamespace())
		return nil
	}
	return index.Requests(list.Items)
}
