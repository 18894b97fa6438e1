package observe

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// Reasons set by the observing reconciler.
const (
	// AcceptedReason: the spec passed validation; this release executes nothing for the kind.
	AcceptedReason = "Accepted"
)

// Observation is what one reconcile saw and did.
type Observation struct {
	// Kind of the object, for messages.
	Kind string
	// Suspended is spec.suspend.
	Suspended bool
	// Err is the first error of the sub-reconcilers, if any.
	Err error
}

// Object is a Magos object the observer can reconcile.
type Object interface {
	conditions.Setter
	GetObservedGeneration() int64
	SetObservedGeneration(int64)
}

// ComputeStatus sets the conditions and observedGeneration of obj from what
// the reconcile observed. observedGeneration moves only on success.
func ComputeStatus(obj Object, o Observation) {
	switch {
	case o.Err != nil:
		conditions.MarkError(obj, o.Err)
		return
	case o.Suspended:
		conditions.MarkReady(obj, metav1.ConditionFalse, magosv1.SuspendedReason,
			o.Kind+" is suspended")
	default:
		conditions.MarkReady(obj, metav1.ConditionFalse, AcceptedReason,
			"The spec is valid; this release observes "+o.Kind+"s but does not act on them yet")
	}
	obj.SetObservedGeneration(obj.GetGeneration())
}
