package project

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/index"
)

// variableSetRefsIndex indexes Projects by the names in spec.variableSetRefs.
const variableSetRefsIndex = ".spec.variableSetRefs"

func indexVariableSetRefs(o client.Object) []string {
	p, ok := o.(*magosv1.Project)
	if !ok {
		return nil
	}
	names := make([]string, 0, len(p.Spec.VariableSetRefs))
	for _, ref := range p.Spec.VariableSetRefs {
		names = append(names, ref.Name)
	}
	return names
}

// projectForWorkspace maps a Workspace to its Project. On an update
// controller-runtime maps the old and the new object, so a Workspace that
// moves between Projects updates both roll-ups.
func projectForWorkspace(_ context.Context, o client.Object) []reconcile.Request {
	ws, ok := o.(*magosv1.Workspace)
	if !ok || ws.Spec.ProjectRef == nil {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ws.Namespace, Name: ws.Spec.ProjectRef.Name}}}
}

// projectsForVariableSet maps a VariableSet to the Projects that share it.
func (r *Reconciler) projectsForVariableSet(ctx context.Context, o client.Object) []reconcile.Request {
	var list magosv1.ProjectList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{variableSetRefsIndex: o.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list Projects for a VariableSet", "variableSet", o.GetName())
		return nil
	}
	return index.Requests(list.Items)
}

// memberChanged passes Workspace updates that change what the roll-up
// counts (or the Project the Workspace belongs to), so the frequent status
// writes of running Workspaces do not each re-reconcile their Project.
type memberChanged struct{ predicate.Funcs }

// Update passes when the counted state changed.
func (memberChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*magosv1.Workspace)
	n, ok2 := e.ObjectNew.(*magosv1.Workspace)
	return !ok1 || !ok2 || memberStateOf(o) != memberStateOf(n)
}

// variableSetReadyChanged passes VariableSet updates that change whether
// it is Ready.
type variableSetReadyChanged struct{ predicate.Funcs }

// Update passes when readiness changed.
func (variableSetReadyChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*magosv1.VariableSet)
	n, ok2 := e.ObjectNew.(*magosv1.VariableSet)
	return !ok1 || !ok2 || variableSetStateOf(o.Name, o) != variableSetStateOf(n.Name, n)
}
