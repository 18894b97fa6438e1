package variableset

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/metrics"
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

// Reconcile renders one VariableSet: get, patch base, deferred status
// patch with events and metrics, deletion, then the one sub-reconciler,
// reconcileReferences. VariableSets have no finalizer (there is nothing to
// clean up) and no suspend.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)
	vs := &magosv1.VariableSet{}
	if err := r.Get(ctx, req.NamespacedName, vs); err != nil {
		if apierrors.IsNotFound(err) {
			trackReferences(req.String(), nil)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base := vs.DeepCopy()
	obs := observation{}

	defer func() {
		obs.Err = retErr
		computeStatus(vs, obs)
		if err := r.Status().Patch(ctx, vs, client.MergeFrom(base)); err != nil && !apierrors.IsNotFound(err) {
			log.Error(err, "Failed to patch status")
			retErr = errors.Join(retErr, err)
		} else {
			r.recordReadyTransition(base, vs)
		}
		if obs.Rendered != nil {
			trackReferences(req.String(), countReferences(obs.Rendered))
		}
		metrics.RecordReconcile(magosv1.VariableSetKind, retErr)
		retErr = rerror.ForRuntime(retErr)
	}()

	if !vs.DeletionTimestamp.IsZero() {
		trackReferences(req.String(), nil)
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.reconcileReferences(ctx, vs, &obs)
}

// reconcileReferences observes every referenced Secret and ConfigMap and
// renders the environment. It sets Ready (True, or False with
// ReferenceNotFound naming what is missing) through computeStatus; an
// error reading an object sets Reconciling with ReferenceReadFailed.
func (r *Reconciler) reconcileReferences(ctx context.Context, vs *magosv1.VariableSet, obs *observation) error {
	objs, err := r.observeReferences(ctx, vs)
	if err != nil {
		return rerror.Retry(ReferenceReadFailedReason, err)
	}
	rd := render(vs, objs)
	obs.Rendered = &rd
	return nil
}

// recordReadyTransition records an event when Ready changed status between
// base and vs. Messages name objects and keys, never values.
func (r *Reconciler) recordReadyTransition(base, vs *magosv1.VariableSet) {
	now := conditions.Get(vs, magosv1.ReadyCondition)
	if r.Events == nil || now == nil {
		return
	}
	if before := conditions.Get(base, magosv1.ReadyCondition); before != nil && before.Status == now.Status {
		return
	}
	eventType := corev1.EventTypeNormal
	if now.Status != "True" {
		eventType = corev1.EventTypeWarning
	}
	r.Events.Eventf(vs, nil, eventType, now.Reason, "Reconcile", "%s", now.Message)
}
