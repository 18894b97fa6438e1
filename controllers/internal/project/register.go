package project

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/index"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

// +kubebuilder:rbac:groups=magos.dev,resources=projects,verbs=get;list;watch
// +kubebuilder:rbac:groups=magos.dev,resources=projects/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=magos.dev,resources=workspaces;variablesets,verbs=get;list;watch

// Register wires the Project reconciler into mgr: Projects, their member
// Workspaces (indexed by spec.projectRef.name) and their shared
// VariableSets (Projects indexed by spec.variableSetRefs).
func Register(mgr ctrl.Manager, opts setup.Options) error {
	ctx := context.Background()
	idx := mgr.GetFieldIndexer()
	if err := index.AddWorkspaceProjectRef(mgr); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &magosv1.Project{}, variableSetRefsIndex, indexVariableSetRefs); err != nil {
		return err
	}
	series := metrics.ConditionSeries(magosv1.ProjectKind, func() client.ObjectList { return &magosv1.ProjectList{} })
	if err := mgr.Add(metrics.ObjectSource(magosv1.ProjectKind, series, mgr.GetCache())); err != nil {
		return err
	}
	rec, err := setup.EventRecorder(mgr, "project", opts)
	if err != nil {
		return err
	}
	r := &Reconciler{Client: mgr.GetClient(), Events: rec}
	return ctrl.NewControllerManagedBy(mgr).
		Named("project").
		For(&magosv1.Project{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&magosv1.Workspace{}, handler.EnqueueRequestsFromMapFunc(projectForWorkspace),
			builder.WithPredicates(memberChanged{})).
		Watches(&magosv1.VariableSet{}, handler.EnqueueRequestsFromMapFunc(r.projectsForVariableSet),
			builder.WithPredicates(variableSetReadyChanged{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Concurrency}).
		Complete(r)
}
