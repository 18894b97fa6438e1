package variableset

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

// +kubebuilder:rbac:groups=magos.dev,resources=variablesets,verbs=get;list;watch
// +kubebuilder:rbac:groups=magos.dev,resources=variablesets/status,verbs=get;update;patch
// list and watch feed the metadata-only cache; get reads the key names of
// the referenced objects, one at a time:
// +kubebuilder:rbac:groups="",resources=secrets;configmaps,verbs=get;list;watch

// Register wires the VariableSet reconciler into mgr: the VariableSets
// themselves through the manager's cache, the Secrets and ConfigMaps they
// reference through a metadata-only cache of the controller's own, with
// an index from each referenced object to the VariableSets that use it.
func Register(mgr ctrl.Manager, opts setup.Options) error {
	meta, err := newMetadataCache(mgr, opts.CacheNamespaces())
	if err != nil {
		return err
	}
	if err := mgr.Add(meta); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &magosv1.VariableSet{}, referenceIndex, indexReferences); err != nil {
		return err
	}
	series := metrics.ConditionSeries(magosv1.VariableSetKind, func() client.ObjectList { return &magosv1.VariableSetList{} })
	if err := mgr.Add(metrics.ObjectSource(magosv1.VariableSetKind, series, mgr.GetCache())); err != nil {
		return err
	}
	rec, err := setup.EventRecorder(mgr, "variableset", opts)
	if err != nil {
		return err
	}
	r := &Reconciler{
		Client:    mgr.GetClient(),
		Metadata:  meta,
		APIReader: mgr.GetAPIReader(),
		Events:    rec,
		keys:      newKeyMemo(),
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("variableset").
		For(&magosv1.VariableSet{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.Concurrency})
	for _, kind := range []string{KindSecret, KindConfigMap} {
		b = b.WatchesRawSource(source.Kind(meta.Cache, metadataObject(kind),
			referenceHandler{kind: kind, reader: mgr.GetClient(), keys: r.keys},
			predicate.TypedResourceVersionChangedPredicate[*metav1.PartialObjectMetadata]{}))
	}
	return b.Complete(r)
}
