package workspace

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/index"
)

// workspacesWithPendingPlans maps a policy change to the Workspaces whose
// plan is not applied yet, so the gate re-evaluates them.
func (r *Reconciler) workspacesWithPendingPlans(ctx context.Context, o client.Object) []reconcile.Request {
	var list magosv1.WorkspaceList
	// Read only: the cache's own objects, not copies.
	opts := []client.ListOption{client.UnsafeDisableDeepCopy}
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

// projectChangedForMembers passes the Project changes its Workspaces read:
// every create and delete, and an update of anything but the roll-up of
// its members (status.workspaces) and the detail of its conditions (a
// Workspace reads only whether it is Ready). The roll-up changes with
// every member's phase: without this, each such change would reconcile
// every Workspace of the namespace.
var projectChangedForMembers = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		older, oldOK := e.ObjectOld.(*magosv1.Project)
		newer, newOK := e.ObjectNew.(*magosv1.Project)
		return !oldOK || !newOK || !equality.Semantic.DeepEqual(memberView(older), memberView(newer))
	},
}

// memberView is what a Workspace reads of p.
func memberView(p *magosv1.Project) magosv1.Project {
	v := magosv1.Project{ObjectMeta: metav1.ObjectMeta{
		Generation: p.Generation, DeletionTimestamp: p.DeletionTimestamp, Labels: p.Labels, Annotations: p.Annotations,
	}, Spec: p.Spec, Status: p.Status}
	v.Status.Workspaces = magosv1.WorkspaceRollup{}
	v.Status.Conditions = nil
	for _, c := range p.Status.Conditions {
		v.Status.Conditions = append(v.Status.Conditions, metav1.Condition{Type: c.Type, Status: c.Status})
	}
	return v
}

// workspacesInNamespace maps a Project or VariableSet change to the
// Workspaces of its namespace; each re-resolves its inputs.
func (r *Reconciler) workspacesInNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	var list magosv1.WorkspaceList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list Workspaces", "namespace", o.GetNamespace())
		return nil
	}
	return index.Requests(list.Items)
}
