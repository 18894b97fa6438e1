package rollout

import (
	"context"
	"slices"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/index"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

// +kubebuilder:rbac:groups=magos.dev,resources=rollouts,verbs=get;list;watch
// +kubebuilder:rbac:groups=magos.dev,resources=rollouts/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=magos.dev,resources=workspaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;ocirepositories;buckets;externalartifacts,verbs=get;list;watch

const (
	// projectRefIndex indexes Rollouts by spec.projectRef.name (and is the
	// name of the shared Workspace index by the same field).
	projectRefIndex = index.WorkspaceProjectRef
	// sourceIndex indexes Rollouts by status.source.
	sourceIndex = ".status.source"
)

// Register wires the Rollout reconciler into mgr: Rollouts, the Workspaces
// of their Projects and the Flux sources those read.
func Register(mgr ctrl.Manager, opts setup.Options) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := index.AddWorkspaceProjectRef(mgr); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &magosv1.Rollout{}, projectRefIndex, func(o client.Object) []string {
		return []string{o.(*magosv1.Rollout).Spec.ProjectRef.Name}
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &magosv1.Rollout{}, sourceIndex, func(o client.Object) []string {
		return []string{o.(*magosv1.Rollout).Status.Source}
	}); err != nil {
		return err
	}
	if err := mgr.Add(metrics.ObjectSource(magosv1.RolloutKind, rolloutSeries, mgr.GetCache())); err != nil {
		return err
	}
	rec, err := setup.EventRecorder(mgr, "rollout", opts)
	if err != nil {
		return err
	}
	r := &Reconciler{Client: mgr.GetClient(), Events: rec}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("rollout").
		For(&magosv1.Rollout{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&magosv1.Rollout{}, handler.EnqueueRequestsFromMapFunc(r.rolloutsOfProject),
			builder.WithPredicates(createOrDelete{})).
		Watches(&magosv1.Workspace{}, handler.EnqueueRequestsFromMapFunc(r.rolloutsForWorkspace),
			builder.WithPredicates(memberChanged{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Concurrency})
	ctl, err := b.Build(r)
	if err != nil {
		return err
	}
	optional := fluxsource.OptionalWatches(r.rolloutsForSource,
		"Rollouts of Workspaces whose sourceRef is a %s do not see its revisions until Flux's CRDs are installed")
	return setup.WatchWhenServed(mgr, ctl, "rollout", optional, setup.OptionalKindInterval)
}

// rolloutsOfProject maps a Rollout created or deleted to every Rollout of
// its Project, so a younger one takes over when the governing one goes.
func (r *Reconciler) rolloutsOfProject(ctx context.Context, o client.Object) []reconcile.Request {
	return r.listRollouts(ctx, client.InNamespace(o.GetNamespace()), client.MatchingFields{projectRefIndex: o.(*magosv1.Rollout).Spec.ProjectRef.Name})
}

// rolloutsForWorkspace maps a Workspace to the Rollouts of its Project. On
// an update both the old and the new object are mapped, so a Workspace
// moving between Projects updates both.
func (r *Reconciler) rolloutsForWorkspace(ctx context.Context, o client.Object) []reconcile.Request {
	ws := o.(*magosv1.Workspace)
	if ws.Spec.ProjectRef == nil {
		return nil
	}
	return r.listRollouts(ctx, client.InNamespace(ws.Namespace), client.MatchingFields{projectRefIndex: ws.Spec.ProjectRef.Name})
}

// rolloutsForSource maps a source whose artifact moved to the Rollouts
// rolling out its revisions.
func (r *Reconciler) rolloutsForSource(kind string) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		return r.listRollouts(ctx, client.MatchingFields{sourceIndex: fluxsource.Key(kind, o.GetNamespace(), o.GetName())})
	}
}

func (r *Reconciler) listRollouts(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	var list magosv1.RolloutList
	if err := r.List(ctx, &list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list Rollouts")
		return nil
	}
	return index.Requests(list.Items)
}

// createOrDelete passes only creations and deletions.
type createOrDelete struct{ predicate.Funcs }

// Update never passes.
func (createOrDelete) Update(event.UpdateEvent) bool { return false }

// memberChanged passes Workspace updates that change what a Rollout reads
// (labels, Project, source, phase, readiness, applied or planned revision,
// conditions), not every status write of a running Workspace.
type memberChanged struct{ predicate.Funcs }

// Update passes when the member state changed.
func (memberChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*magosv1.Workspace)
	n, ok2 := e.ObjectNew.(*magosv1.Workspace)
	return !ok1 || !ok2 || !slices.Equal(memberKey(o), memberKey(n))
}

// memberKey lists the fields memberChanged compares.
func memberKey(ws *magosv1.Workspace) []string {
	key := []string{fluxsource.KeyOf(ws), string(ws.Status.Phase)}
	if ws.Spec.ProjectRef != nil {
		key = append(key, ws.Spec.ProjectRef.Name)
	}
	for k, v := range ws.Labels {
		key = append(key, "l:"+k+"="+v)
	}
	slices.Sort(key[2:])
	if a := ws.Status.LastApplied; a != nil {
		key = append(key, "a:"+a.Revision+a.Time.String())
	}
	if p := ws.Status.Plan; p != nil {
		key = append(key, "p:"+p.Revision)
	}
	for _, c := range ws.Status.Conditions {
		if c.Type == magosv1.ReadyCondition || c.Type == magosv1.StalledCondition {
			key = append(key, "c:"+c.Type+string(c.Status)+c.Reason)
		}
	}
	return key
}
