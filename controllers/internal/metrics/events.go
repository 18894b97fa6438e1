package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Results of forwarding one event to the notification-controller, the
// values of the result label of magos_events_forwarded_total.
const (
	// EventDelivered: the receiver accepted the event.
	EventDelivered = "delivered"
	// EventDropped: the forward queue was full; the event was never posted.
	EventDropped = "dropped"
	// EventFailed: the receiver refused the event or stayed unreachable
	// through every attempt.
	EventFailed = "failed"
)

var eventsForwarded = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "magos_events_forwarded_total",
	Help: "Events forwarded to Flux's notification-controller, by result (delivered, dropped: the queue was full, failed: refused or unreachable).",
}, []string{"result"})

func init() {
	ctrlmetrics.Registry.MustRegister(eventsForwarded)
	// Start every result at zero so rate() sees the first drop.
	for _, r := range []string{EventDelivered, EventDropped, EventFailed} {
		eventsForwarded.WithLabelValues(r)
	}
}

// RecordEventForwarded counts one event by how forwarding it ended.
func RecordEventForwarded(result string) { eventsForwarded.WithLabelValues(result).Inc() }
