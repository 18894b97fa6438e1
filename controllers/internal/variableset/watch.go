package variableset

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// referenceHandler turns an event on a Secret's or ConfigMap's metadata
// into requests for the VariableSets that reference it, found through
// referenceIndex; a deletion also drops the object's memoised key names.
type referenceHandler struct {
	kind   string
	reader client.Reader
	keys   *keyMemo
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// Create enqueues the VariableSets that reference the new object.
func (h referenceHandler) Create(ctx context.Context, e event.TypedCreateEvent[*metav1.PartialObjectMetadata], q queue) {
	h.enqueue(ctx, e.Object, q)
}

// Update enqueues the VariableSets that reference the changed object.
func (h referenceHandler) Update(ctx context.Context, e event.TypedUpdateEvent[*metav1.PartialObjectMetadata], q queue) {
	h.enqueue(ctx, e.ObjectNew, q)
}

// Delete forgets the object's key names and enqueues its VariableSets.
func (h referenceHandler) Delete(ctx context.Context, e event.TypedDeleteEvent[*metav1.PartialObjectMetadata], q queue) {
	h.keys.forget(memoKey{Namespace: e.Object.Namespace, Kind: h.kind, Name: e.Object.Name})
	h.enqueue(ctx, e.Object, q)
}

// Generic enqueues the VariableSets that reference the object.
func (h referenceHandler) Generic(ctx context.Context, e event.TypedGenericEvent[*metav1.PartialObjectMetadata], q queue) {
	h.enqueue(ctx, e.Object, q)
}

func (h referenceHandler) enqueue(ctx context.Context, o *metav1.PartialObjectMetadata, q queue) {
	var list magosv1.VariableSetList
	if err := h.reader.List(ctx, &list, client.InNamespace(o.Namespace),
		client.MatchingFields{referenceIndex: indexKey(h.kind, o.Name)}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list VariableSets for a referenced object", "kind", h.kind, "object", o.Name)
		return
	}
	for _, vs := range list.Items {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: vs.Namespace, Name: vs.Name}})
	}
}
