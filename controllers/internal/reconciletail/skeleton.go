package reconciletail

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Skeleton is what one kind brings to the reconcile every controller
// shares (Reconcile).
type Skeleton[T client.Object] struct {
	// Gone runs when the object no longer exists, to forget what was
	// tracked for it. Optional.
	Gone func()
	// Body is the kind's reconcile between reading the object and writing
	// its status: it observes, decides and acts on obj; base is the object
	// as read, the patch base.
	Body func(ctx context.Context, obj, base T) (ctrl.Result, error)
	// Tail says how the reconcile ends (Finish's options); it is asked once
	// Body returned.
	Tail func(obj, base T) Options
}

// Reconcile is every reconciler's skeleton: get the object (one that is
// gone ends the reconcile, after Gone, with no error), keep a copy as the
// patch base, run the kind's Body, and end with Finish, which computes
// and writes status whatever Body returned.
func Reconcile[T client.Object](ctx context.Context, c client.Client, req ctrl.Request, obj T, k Skeleton[T]) (ctrl.Result, error) {
	if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) && k.Gone != nil {
			k.Gone()
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base := obj.DeepCopyObject().(T)
	result, err := k.Body(ctx, obj, base)
	return Finish(ctx, c, obj, base, result, err, k.Tail(obj, base))
}
