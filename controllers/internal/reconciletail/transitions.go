package reconciletail

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// Object is a Kubernetes object with status conditions.
type Object interface {
	runtime.Object
	conditions.Setter
}

// RecordConditionTransition emits an event on rec when condition t of obj
// changed status since base (or appeared): Normal when it is now True,
// Warning otherwise, with the condition's reason and message. Call it from
// AfterPatch, so the event follows the status that explains it.
func RecordConditionTransition(rec events.EventRecorder, base, obj Object, t string) {
	now := conditions.Get(obj, t)
	if rec == nil || now == nil {
		return
	}
	if before := conditions.Get(base, t); before != nil && before.Status == now.Status {
		return
	}
	eventType := corev1.EventTypeNormal
	if now.Status != metav1.ConditionTrue {
		eventType = corev1.EventTypeWarning
	}
	rec.Eventf(obj, nil, eventType, now.Reason, "Reconcile", "%s", now.Message)
}
