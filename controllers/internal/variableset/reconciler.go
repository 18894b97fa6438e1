package variableset

import (
	"context"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/reconciletail"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// Reconciler reconciles VariableSets.
//
// It reads VariableSets through the manager's cache, but never Secrets or
// ConfigMaps: reading those through Client would start a cache of their
// contents. Their metadata comes from Metadata, their key names from
// APIReader.
type Reconciler struct {
	client.Client
	// Metadata reads Secret and ConfigMap metadata (name and
	// resourceVersion) from a cache that holds nothing else.
	Metadata client.Reader
	// APIReader reads a referenced Secret or ConfigMap, uncached, for its
	// key names only.
	APIReader client.Reader
	Events    events.EventRecorder
	keys      *keyMemo
}

// Reconcile renders one VariableSet in the shared skeleton
// (reconciletail.Reconcile): deletion, then the one sub-reconciler,
// reconcileReferences. VariableSets have no finalizer (there is nothing to
// clean up) and no suspend.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obs := observation{}
	result, err := reconciletail.Reconcile(ctx, r.Client, req, &magosv1.VariableSet{}, reconciletail.Skeleton[*magosv1.VariableSet]{
		Gone: func() { trackReferences(req.String(), nil) },
		Body: func(ctx context.Context, vs, _ *magosv1.VariableSet) (ctrl.Result, error) {
			if !vs.DeletionTimestamp.IsZero() {
				trackReferences(req.String(), nil)
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, r.reconcileReferences(ctx, vs, &obs)
		},
		// Status is a pure function of the referenced objects observed now,
		// so an unchanged status is not written and a stale read needs no
		// lock: the next reconcile observes again. Messages name objects
		// and keys, never values.
		Tail: func(vs, base *magosv1.VariableSet) reconciletail.Options {
			return reconciletail.Options{
				Kind:       magosv1.VariableSetKind,
				Status:     func(err error) { obs.Err = err; computeStatus(vs, obs) },
				AfterPatch: func() { reconciletail.RecordConditionTransition(r.Events, base, vs, magosv1.ReadyCondition) },
			}
		},
	})
	if obs.Rendered != nil {
		trackReferences(req.String(), countReferences(obs.Rendered))
	}
	return result, err
}

// reconcileReferences observes every referenced Secret and ConfigMap and
// renders the environment. It sets Ready (True, or False with
// ReferenceNotFound naming what is missing) through computeStatus; an
// error reading an object sets Reconciling with ReferenceReadFailed.
func (r *Reconciler) reconcileReferences(ctx context.Context, vs *magosv1.VariableSet, obs *observation) error {
	objs, err := r.observeReferences(ctx, vs)
	if err != nil {
		return rerror.Retry(magosv1.ReasonReferenceReadFailed, err)
	}
	rd := render(vs, objs)
	obs.Rendered = &rd
	return nil
}
