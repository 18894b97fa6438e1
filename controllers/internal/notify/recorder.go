package notify

import (
	"fmt"
	"maps"
	"os"
	"strings"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/reference"
	ctrl "sigs.k8s.io/controller-runtime"
)

// AnnotatedRecorder is an events.EventRecorder that also takes event
// metadata (Meta). Kubernetes events cannot carry it; a forwarded event
// does.
type AnnotatedRecorder interface {
	events.EventRecorder
	AnnotatedEventf(regarding, related runtime.Object, metadata map[string]string, eventType, reason, action, note string, args ...any)
}

// Eventf records an event on rec with metadata when rec takes it (an
// AnnotatedRecorder), else without. A nil rec records nothing.
func Eventf(rec events.EventRecorder, regarding, related runtime.Object, metadata map[string]string, eventType, reason, action, note string, args ...any) {
	switch r := rec.(type) {
	case nil:
	case AnnotatedRecorder:
		r.AnnotatedEventf(regarding, related, metadata, eventType, reason, action, note, args...)
	default:
		r.Eventf(regarding, related, eventType, reason, action, note, args...)
	}
}

// Recorder records every event as a Kubernetes event through its
// events.EventRecorder and forwards it, with its metadata, as a Flux event.
type Recorder struct {
	events.EventRecorder
	forwarder  *Forwarder
	scheme     *runtime.Scheme
	controller string
	instance   string
}

var _ AnnotatedRecorder = (*Recorder)(nil)

// NewRecorder returns a Recorder recording through rec (nil: no Kubernetes
// events) and forwarding through fwd; scheme finds the kind of the objects
// events are about; controller is the reporting controller, e.g.
// workspace-controller. The reporting instance is the host (pod) name.
func NewRecorder(rec events.EventRecorder, fwd *Forwarder, scheme *runtime.Scheme, controller string) *Recorder {
	instance, _ := os.Hostname()
	return &Recorder{EventRecorder: rec, forwarder: fwd, scheme: scheme, controller: controller, instance: instance}
}

// Eventf records an event without metadata.
func (r *Recorder) Eventf(regarding, related runtime.Object, eventType, reason, action, note string, args ...any) {
	r.AnnotatedEventf(regarding, related, nil, eventType, reason, action, note, args...)
}

// AnnotatedEventf records a Kubernetes event (without metadata) and
// forwards the event with metadata.
func (r *Recorder) AnnotatedEventf(regarding, related runtime.Object, metadata map[string]string, eventType, reason, action, note string, args ...any) {
	if r.EventRecorder != nil {
		r.EventRecorder.Eventf(regarding, related, eventType, reason, action, note, args...)
	}
	if r.forwarder == nil {
		return
	}
	ev, err := r.fluxEvent(regarding, metadata, eventType, reason, fmt.Sprintf(note, args...))
	if err != nil {
		ctrl.Log.WithName("events").Error(err, "Unable to forward event", "reason", reason)
		return
	}
	r.forwarder.Forward(ev)
}

// fluxEvent is the Flux event of one recorded event. Its metadata are
// Flux's: the object's event.toolkit.fluxcd.io/ annotations and then the
// given metadata.
func (r *Recorder) fluxEvent(obj runtime.Object, metadata map[string]string, eventType, reason, message string) (eventv1.Event, error) {
	ref, err := reference.GetReference(r.scheme, obj)
	if err != nil {
		return eventv1.Event{}, fmt.Errorf("referencing the event's object: %w", err)
	}
	if ref.Kind == "" || ref.Name == "" || ref.Namespace == "" {
		return eventv1.Event{}, fmt.Errorf("the event's object has no kind, name or namespace: %s %s/%s", ref.Kind, ref.Namespace, ref.Name)
	}
	var meta map[string]string
	if o, ok := obj.(metav1.Object); ok {
		for k, v := range o.GetAnnotations() {
			if strings.HasPrefix(k, userMetadataPrefix) {
				if meta == nil {
					meta = map[string]string{}
				}
				meta[k] = v
			}
		}
	}
	if len(metadata) > 0 {
		if meta == nil {
			meta = map[string]string{}
		}
		maps.Copy(meta, metadata)
	}
	return eventv1.Event{
		InvolvedObject:      *ref,
		Severity:            severity(eventType),
		Timestamp:           metav1.Now(),
		Message:             message,
		Reason:              reason,
		Metadata:            meta,
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
	}, nil
}

// severity is the Flux severity of a Kubernetes event type: a Warning is
// an error, anything else is info.
func severity(eventType string) string {
	if eventType == corev1.EventTypeWarning {
		return eventv1.EventSeverityError
	}
	return eventv1.EventSeverityInfo
}
