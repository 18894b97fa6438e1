package ops

import (
	"context"
	"time"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/view"
)

// RequestReconcile sets the reconcile request annotation of the target
// Workspace to the current time, after check (if any) accepts it, and
// returns the time it set.
func RequestReconcile(ctx context.Context, t *Target, check func(*magosv1.Workspace) error) (string, error) {
	at := time.Now().UTC().Format(time.RFC3339Nano)
	ws := &magosv1.Workspace{}
	if err := t.Update(ctx, ws, func() error {
		if check != nil {
			if err := check(ws); err != nil {
				return err
			}
		}
		setAnnotation(ws, magosv1.ReconcileRequestAnnotation, at)
		return nil
	}); err != nil {
		return "", err
	}
	return at, nil
}

// Retryable refuses a Workspace whose newest run did not fail.
func Retryable(ws *magosv1.Workspace) error {
	r := ws.Status.LastRun()
	if r == nil || r.Result == magosv1.ResultSucceeded || ws.Status.CurrentRun != nil {
		return failure.Refused("Workspace %s has no failed run to retry (phase %s); to plan again anyway use: kubectl magos replan %s",
			ws.Name, view.OrNone(string(ws.Status.Phase)), ws.Name)
	}
	return nil
}

// RequestDone says whether the controller handled the request at and the
// run it started has finished; a run started since that failed, or a
// stall, fails it.
func RequestDone(ws *magosv1.Workspace, at string) (bool, error) {
	st := &ws.Status
	if st.LastHandledReconcileAt != at || st.CurrentRun != nil {
		return false, nil
	}
	requested, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return false, err
	}
	if r := st.LastRun(); r != nil && r.Result != magosv1.ResultSucceeded && r.Started != nil && !r.Started.Time.Before(requested.Truncate(time.Second)) {
		return false, failure.Failed("the %s run %s failed (%s): %s", r.Phase, r.Job, r.Reason, r.Message)
	}
	if err := StalledError(ws); err != nil {
		return false, err
	}
	return true, nil
}
