package decide

import (
	"fmt"
	"time"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// HeldRun is why the run queue holds a run that would start (facts.Held).
type HeldRun struct {
	// After is when the Workspace looks again.
	After time.Duration
	// Bound names what holds the run: a bound on runs in progress, or the
	// namespace's plan rate.
	Bound string
	// Priority is the run's place in the queue; "" when the plan rate holds
	// it, which takes no place.
	Priority string
	// Limited, when set, is the requested-plan interval that put a plan a
	// person asked for at drift priority.
	Limited time.Duration
}

// Queued is d, which starts a run, held as h says: Waiting (Queued),
// except that a held drift re-plan leaves an applied Workspace Idle and
// Ready, its message saying the check waits.
func Queued(d Decision, f Facts, h *HeldRun) Decision {
	kind := runKind(d.Run.Phase, d.Run.Mode, d.Run.Drift)
	var msg string
	switch {
	case h.Priority == "":
		msg = fmt.Sprintf("The %s run waits %s: %s", kind, h.After.Round(time.Second), h.Bound)
	case d.Run.Drift:
		msg = fmt.Sprintf("the %s is queued: %s", kind, h.Bound)
	default:
		msg = fmt.Sprintf("The %s run is queued (priority %s): %s; applies and destroys go first, drift re-plans last, the namespaces in turn", kind, h.Priority, h.Bound)
		if h.Limited > 0 {
			msg += fmt.Sprintf("; a requested plan of this namespace started less than %s ago (--requested-plan-interval), so this one waits at drift priority", h.Limited)
		}
	}
	if d.Run.Drift {
		return Decision{Phase: magosv1.PhaseIdle, Action: ActWait, After: h.After, Queued: true, Message: settledMessage(f) + "; " + msg}
	}
	return Decision{Phase: magosv1.PhaseWaiting, Reason: magosv1.ReasonQueued, Action: ActWait, After: h.After, Queued: true, Message: msg}
}
