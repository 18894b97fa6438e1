package ops

import (
	"context"
	"time"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/view"
)

// pollInterval is how often a waiting command reads the Workspace.
const pollInterval = time.Second

// WaitWorkspace reads the Workspace until done says it is there (true) or
// failed (an error), or timeout passes: a Timeout error that says what it
// waited for and what the Workspace is doing.
func (t *Target) WaitWorkspace(ctx context.Context, timeout time.Duration, what string,
	done func(*magosv1.Workspace) (bool, error)) (*magosv1.Workspace, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	ws := &magosv1.Workspace{}
	for {
		if err := t.Get(ctx, ws); err != nil {
			return nil, err
		}
		if ok, err := done(ws); err != nil || ok {
			return ws, err
		}
		select {
		case <-ctx.Done():
			return nil, failure.Failed("interrupted while waiting for Workspace %s to %s", t.Key.Name, what)
		case <-deadline.C:
			return nil, failure.New(failure.ExitFailure, failure.ReasonTimeout, "timed out after %s waiting for Workspace %s to %s; it is %s: %s",
				timeout, t.Key.Name, what, view.OrNone(string(ws.Status.Phase)), view.ReadyMessage(ws.Status.Conditions))
		case <-tick.C:
		}
	}
}

// SourceRevision is the revision RevisionApplied takes for the source
// revision the Workspace last saw (wait --applied without a value).
const SourceRevision = "source"

// RevisionApplied says whether the Workspace applied rev (SourceRevision:
// the source revision in its status), and fails when it stalled.
func RevisionApplied(ws *magosv1.Workspace, rev string) (bool, error) {
	st := &ws.Status
	if rev == SourceRevision {
		if st.Source == nil {
			return false, StalledError(ws)
		}
		rev = st.Source.Revision
	}
	if st.LastApplied != nil && st.LastApplied.Revision == rev {
		return true, nil
	}
	return false, StalledError(ws)
}
