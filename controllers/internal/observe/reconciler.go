package observe

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// ClientObject is an Object that is also a controller-runtime client.Object.
type ClientObject interface {
	client.Object
	Object
}

// Reconciler observes objects of one kind.
type Reconciler[T ClientObject] struct {
	client.Client
	// Kind names the reconciled kind.
	Kind string
	// New returns an empty object of the kind.
	New func() T
	// Suspended reports spec.suspend; nil for kinds without it.
	Suspended func(T) bool
}

// SetupWithManager registers the reconciler for its kind.
func (r *Reconciler[T]) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(r.New()).Named(r.Kind).Complete(r)
}

// Reconcile follows the shared skeleton; its only sub-reconciler is the
// observation itself.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)
	start := time.Now()

	obj := r.New()
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base := obj.DeepCopyObject().(T)
	obs := Observation{Kind: r.Kind}

	defer func() {
		obs.Err = retErr
		ComputeStatus(obj, obs)
		if err := r.Status().Patch(ctx, obj, client.MergeFrom(base)); err != nil && !apierrors.IsNotFound(err) {
			log.Error(err, "Failed to patch status")
			if retErr == nil {
				retErr = err
			}
		}
		metrics.RecordReconcile(r.Kind, resultLabel(retErr))
		log.V(1).Info("Reconciled", "duration", time.Since(start).String())
		retErr = rerror.ForRuntime(retErr)
	}()

	if !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	if r.Suspended != nil && r.Suspended(obj) {
		obs.Suspended = true
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, nil
}

func resultLabel(err error) string {
	if err == nil {
		return "success"
	}
	if e, ok := rerror.As(err); ok && e.Stalling {
		return "stalled"
	}
	return "retry"
}
