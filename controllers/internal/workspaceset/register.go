package workspaceset

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/magos-dev/magos/apis/artifactdigest"
	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/artifacthost"
	"github.com/magos-dev/magos/controllers/internal/configtree/treecache"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

// +kubebuilder:rbac:groups=magos.dev,resources=workspacesets,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=magos.dev,resources=workspacesets/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=magos.dev,resources=workspaces,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;ocirepositories;buckets;externalartifacts,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// Register wires the WorkspaceSet reconciler into mgr: the sets, the
// Workspaces they own (an edit, a Ready change), namespaces (their
// labels) and Flux sources (their artifacts, once Flux's CRDs are
// served). Its directories generator downloads artifacts from any host;
// the workspaceset-controller runs a Controller, whose --artifact-hosts
// bound them.
func Register(mgr ctrl.Manager, opts setup.Options) error { return register(mgr, opts, nil) }

// register is Register with the directories generator downloading from
// hosts only (nil: any).
func register(mgr ctrl.Manager, opts setup.Options, hosts artifacthost.Hosts) error {
	series := metrics.ConditionSeries(magosv1.WorkspaceSetKind, func() client.ObjectList { return &magosv1.WorkspaceSetList{} })
	if err := mgr.Add(metrics.ObjectSource(magosv1.WorkspaceSetKind, series, mgr.GetCache())); err != nil {
		return err
	}
	rec, err := setup.EventRecorder(mgr, "workspaceset", opts)
	if err != nil {
		return err
	}
	r := &Reconciler{
		Client:  mgr.GetClient(),
		Events:  rec,
		Sources: newSources(mgr.GetClient(), hosts),
	}
	ctl, err := ctrl.NewControllerManagedBy(mgr).
		Named("workspaceset").
		For(&magosv1.WorkspaceSet{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&magosv1.Workspace{}, builder.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
			predicate.AnnotationChangedPredicate{}, readyChanged{}))).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.setsWith(readsNamespaces)),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Concurrency}).
		Build(r)
	if err != nil {
		return err
	}
	optional := fluxsource.OptionalWatches(func(kind string) handler.MapFunc { return r.setsWith(readsSource(kind)) },
		"a directories generator reading a %s stalls until Flux's CRDs are installed")
	return setup.WatchWhenServed(mgr, ctl, "workspaceset", optional, setup.OptionalKindInterval)
}

// newSources reads sources with c, and their artifacts' directories
// (downloaded once per digest) from hosts only (nil: any).
func newSources(c client.Reader, hosts artifacthost.Hosts) sourceReader {
	return sourceReader{client: c, trees: treeCache{
		&treecache.Cache{Client: hosts.Client(time.Minute), MaxBytes: artifactdigest.MaxArtifactBytes},
	}}
}

// treeCache reads an artifact's directories through a treecache.Cache.
type treeCache struct{ *treecache.Cache }

func (c treeCache) Dirs(ctx context.Context, url, digest string) ([]string, error) {
	t, err := c.Tree(ctx, url, digest)
	if err != nil {
		return nil, err
	}
	return t.Dirs(), nil
}

// setsWith maps an object to the sets (in its namespace, or every set for
// a cluster-scoped object) that reads says read it.
func (r *Reconciler) setsWith(reads func(*magosv1.WorkspaceSet, client.Object) bool) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var list magosv1.WorkspaceSetList
		var opts []client.ListOption
		if o.GetNamespace() != "" {
			opts = append(opts, client.InNamespace(o.GetNamespace()))
		}
		if err := r.List(ctx, &list, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Failed to list WorkspaceSets")
			return nil
		}
		var reqs []reconcile.Request
		for i := range list.Items {
			if set := &list.Items[i]; reads(set, o) {
				reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: set.Namespace, Name: set.Name}})
			}
		}
		return reqs
	}
}

// eachBase calls fn for every base generator of set, nested ones included.
func eachBase(set *magosv1.WorkspaceSet, fn func(magosv1.WorkspaceSetBaseGenerator) bool) bool {
	for _, g := range set.Spec.Generators {
		nested := []magosv1.WorkspaceSetBaseGenerator{{List: g.List, Directories: g.Directories, Namespaces: g.Namespaces}}
		if g.Matrix != nil {
			nested = append(nested, g.Matrix.Generators...)
		}
		if g.Merge != nil {
			nested = append(nested, g.Merge.Generators...)
		}
		for _, b := range nested {
			if fn(b) {
				return true
			}
		}
	}
	return false
}

// readsNamespaces: the set has a namespaces generator.
func readsNamespaces(set *magosv1.WorkspaceSet, _ client.Object) bool {
	return eachBase(set, func(b magosv1.WorkspaceSetBaseGenerator) bool { return b.Namespaces != nil })
}

// readsSource: the set has a directories generator reading the source o
// of kind.
func readsSource(kind string) func(*magosv1.WorkspaceSet, client.Object) bool {
	return func(set *magosv1.WorkspaceSet, o client.Object) bool {
		return eachBase(set, func(b magosv1.WorkspaceSetBaseGenerator) bool {
			return b.Directories != nil && b.Directories.SourceRef.Kind == kind && b.Directories.SourceRef.Name == o.GetName()
		})
	}
}

// readyChanged passes Workspace updates whose Ready status changed, so the
// set's Ready count follows them.
type readyChanged struct{ predicate.Funcs }

func (readyChanged) Update(e event.UpdateEvent) bool {
	ready := func(o client.Object) string {
		ws, ok := o.(*magosv1.Workspace)
		if !ok {
			return ""
		}
		for _, c := range ws.Status.Conditions {
			if c.Type == magosv1.ReadyCondition {
				return string(c.Status)
			}
		}
		return ""
	}
	return ready(e.ObjectOld) != ready(e.ObjectNew)
}
