package workspace

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/magos-dev/magos/controllers/internal/reconciletail"
)

// reports is what one reconcile reports once the status that explains it
// is written (reconciletail.Finish): its events, buffered, and its run
// metrics. A reconcile whose status patch fails drops them, and its retry
// reports them again, so nothing is reported twice or ahead of the status.
type reports struct {
	events  reconciletail.EventBuffer
	metrics []func()
	// recorder is the manager's recorder, for events of a write that is
	// not the status patch (a finalizer removal that deletes the object).
	recorder events.EventRecorder
}

// forReconcile is the copy of r that one reconcile works with: its events
// and run metrics wait for the status patch.
func (r *Reconciler) forReconcile() *Reconciler {
	rr := *r
	rr.reports = &reports{recorder: r.Events}
	if r.Events != nil {
		rr.Events = &rr.reports.events
	}
	return &rr
}

// afterPatch reports the run metrics recorded during the reconcile.
func (p *reports) afterPatch() {
	for _, fn := range p.metrics {
		fn()
	}
}

// event records a Kubernetes event on obj (once the status is written).
func (r *Reconciler) event(obj runtime.Object, eventType, reason, format string, args ...any) {
	if r.Events != nil {
		r.Events.Eventf(obj, nil, eventType, reason, reason, format, args...)
	}
}

// reportNow reports what this reconcile recorded so far, at once: after a
// write other than the status patch that deletes the object.
func (r *Reconciler) reportNow() {
	if r.reports == nil {
		return
	}
	r.reports.events.Flush(r.reports.recorder)
	r.reports.afterPatch()
	r.reports.metrics = nil
}

// later reports fn once the status is written (at once outside a
// reconcile).
func (r *Reconciler) later(fn func()) {
	if r.reports == nil {
		fn()
		return
	}
	r.reports.metrics = append(r.reports.metrics, fn)
}
