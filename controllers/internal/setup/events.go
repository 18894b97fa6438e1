package setup

import (
	"fmt"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/magos-dev/magos/controllers/internal/notify"
)

// EventRecorder is the event recorder of the controller called name (e.g.
// "workspace"): the manager's, reporting as <name>-controller, which also
// forwards every event to opts.EventsAddr when it is set. The forwarder
// runs with the manager.
func EventRecorder(mgr ctrl.Manager, name string, opts Options) (events.EventRecorder, error) {
	reporter := name + "-controller"
	rec := mgr.GetEventRecorder(reporter)
	if opts.EventsAddr == "" {
		return rec, nil
	}
	fwd, err := notify.NewForwarder(opts.EventsAddr, notify.ForwarderOptions{})
	if err != nil {
		return nil, fmt.Errorf("--events-addr: %w", err)
	}
	if err := mgr.Add(fwd); err != nil {
		return nil, err
	}
	return notify.NewRecorder(rec, fwd, mgr.GetScheme(), reporter), nil
}
