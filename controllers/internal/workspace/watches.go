package workspace

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/index"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
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

// policyChanged passes the policy changes the gate reads: its spec (a new
// generation), and whether a cluster policy allows waivers, which is an
// annotation.
var policyChanged = predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetAnnotations()[magosv1.WaivableAnnotation] != e.ObjectNew.GetAnnotations()[magosv1.WaivableAnnotation]
	},
})

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

// runnerPodEvents passes the events of runner Pods that the Workspace acts
// on: a container that will not start, and a Pod ending or going away (the
// run of a Job deleted while its Pod stopped ends with its Pod). Ordinary
// Pod updates do not wake the Workspace.
var runnerPodEvents = predicate.Funcs{
	CreateFunc: func(e event.CreateEvent) bool { return runnerPodWithStartFailure(e.Object) },
	UpdateFunc: func(e event.UpdateEvent) bool {
		return runnerPodWithStartFailure(e.ObjectNew) || (runnerPod(e.ObjectNew) && podEnded(e.ObjectNew) && !podEnded(e.ObjectOld))
	},
	DeleteFunc:  func(e event.DeleteEvent) bool { return runnerPod(e.Object) },
	GenericFunc: func(e event.GenericEvent) bool { return runnerPodWithStartFailure(e.Object) },
}

func runnerPod(o client.Object) bool {
	_, ok := o.(*corev1.Pod)
	return ok && o.GetLabels()[magosv1.WorkspaceLabel] != ""
}

func runnerPodWithStartFailure(o client.Object) bool {
	if !runnerPod(o) {
		return false
	}
	reason, _ := runjob.StartFailure(o.(*corev1.Pod))
	return reason != ""
}

func podEnded(o client.Object) bool {
	pod, ok := o.(*corev1.Pod)
	return ok && runjob.PodEnded(pod)
}

// workspaceOfPod maps a runner Pod to its Workspace.
func workspaceOfPod(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[magosv1.WorkspaceLabel]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
}

// sourceRefIndex indexes Workspaces by "<kind>/<namespace>/<name>" of their source.
const sourceRefIndex = ".spec.sourceRef"

func indexSourceRefs(mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(context.Background(), &magosv1.Workspace{}, sourceRefIndex,
		func(o client.Object) []string { return []string{fluxsource.KeyOf(o.(*magosv1.Workspace))} })
}

// workspacesForSource maps a source event to the Workspaces that use it.
func (r *Reconciler) workspacesForSource(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var list magosv1.WorkspaceList
		if err := r.List(ctx, &list, client.MatchingFields{sourceRefIndex: fluxsource.Key(kind, o.GetNamespace(), o.GetName())}, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Failed to list Workspaces for source", "source", o.GetName())
			return nil
		}
		return index.Requests(list.Items)
	}
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

// dependencyRequests maps a Workspace change to the Workspaces it may
// unblock: those that depend on it, and (for a deleted dependent) those it
// depends on.
func (r *Reconciler) dependencyRequests(ctx context.Context, o client.Object) []reconcile.Request {
	ws := o.(*magosv1.Workspace)
	var list magosv1.WorkspaceList
	if err := r.List(ctx, &list, client.InNamespace(ws.Namespace), client.MatchingFields{index.WorkspaceDependsOn: ws.Name}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list the Workspaces that depend on a Workspace", "workspace", ws.Name)
		return nil
	}
	reqs := index.Requests(list.Items)
	for _, ref := range ws.Spec.DependsOn {
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ws.Namespace, Name: ref.Name}})
	}
	return reqs
}
