package workspace

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
)

// admissionOf asks the Rollout governing the Workspace's Project, from its
// status alone, whether plan may be applied now.
func (r *Reconciler) admissionOf(ctx context.Context, ws *magosv1.Workspace, plan *magosv1.PlanStatus) (decide.Admission, error) {
	if ws.Spec.ProjectRef == nil {
		return decide.Admission{}, nil
	}
	var list magosv1.RolloutList
	if err := r.List(ctx, &list, client.InNamespace(ws.Namespace)); err != nil {
		return decide.Admission{}, fmt.Errorf("listing Rollouts: %w", err)
	}
	d := magosv1.RolloutAdmission(magosv1.GoverningRollout(list.Items, ws.Spec.ProjectRef.Name), ws, plan.Revision)
	return decide.Admission{Denied: !d.Allowed, Message: d.Message}, nil
}

// rolloutHandler enqueues the Workspaces whose admission a Rollout change
// may decide: on create and delete every Workspace of the namespace that
// awaits promotion or is named in the Rollout's stages; on update only those
// whose stage admission (stage, admitted revision, slot, unstaged) changed.
func (r *Reconciler) rolloutHandler() handler.TypedEventHandler[client.Object, reconcile.Request] {
	all := func(ctx context.Context, o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		ro := o.(*magosv1.Rollout)
		var list magosv1.WorkspaceList
		if err := r.List(ctx, &list, client.InNamespace(ro.Namespace), client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Failed to list Workspaces for a Rollout", "rollout", ro.Name)
			return
		}
		gates := admissionKeys(ro)
		for _, ws := range list.Items {
			if _, named := gates[ws.Name]; named || ws.Status.Phase == magosv1.PhaseAwaitingPromotion {
				q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ws.Namespace, Name: ws.Name}})
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			all(ctx, e.Object, q)
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			all(ctx, e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			before, after := admissionKeys(e.ObjectOld.(*magosv1.Rollout)), admissionKeys(e.ObjectNew.(*magosv1.Rollout))
			for name, key := range after {
				if before[name] != key {
					q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ObjectNew.GetNamespace(), Name: name}})
				}
			}
			for name := range before {
				if _, ok := after[name]; !ok {
					q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: e.ObjectNew.GetNamespace(), Name: name}})
				}
			}
		},
	}
}

// admissionKeys sums up, per Workspace named in ro's status, what
// magosv1.RolloutAdmission reads for it.
func admissionKeys(ro *magosv1.Rollout) map[string]string {
	keys := map[string]string{}
	for _, name := range ro.Status.UnstagedWorkspaces {
		keys[name] = "unstaged"
	}
	for _, st := range ro.Status.Stages {
		for _, w := range st.Workspaces {
			keys[w.Name] = fmt.Sprintf("%s/%s/%s/%t", st.Name, st.AdmittedRevision, st.Phase, slices.Contains(st.AdmittedWorkspaces, w.Name))
		}
	}
	return keys
}
