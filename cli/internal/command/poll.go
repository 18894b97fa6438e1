package command

import (
	"context"
	"time"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// pollInterval is how often a waiting command reads the Workspace.
const pollInterval = time.Second

// waitWorkspace reads the Workspace until done says it is there (true) or
// failed (an error), or timeout passes: a Timeout error that says what it
// waited for and what the Workspace is doing.
func (t *target) waitWorkspace(ctx context.Context, timeout time.Duration, what string,
	done func(*magosv1.Workspace) (bool, error)) (*magosv1.Workspace, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	ws := &magosv1.Workspace{}
	for {
		if err := t.get(ctx, ws); err != nil {
			return nil, err
		}
		if ok, err := done(ws); err != nil || ok {
			return ws, err
		}
		select {
		case <-ctx.Done():
			return nil, failed("interrupted while waiting for Workspace %s to %s", t.key.Name, what)
		case <-deadline.C:
			return nil, newError(ExitFailure, ReasonTimeout, "timed out after %s waiting for Workspace %s to %s; it is %s: %s",
				timeout, t.key.Name, what, orNone(string(ws.Status.Phase)), readyMessage(ws.Status.Conditions))
		case <-tick.C:
		}
	}
}
