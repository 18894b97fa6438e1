package reconciletail

import (
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// forRuntime maps err to what controller-runtime expects: stalling errors
// (rerror.Stall) become terminal (no requeue), waits (rerror.Wait) become
// nil (not a failure: forRuntimeResult keeps their requeue), others are
// returned for backoff.
func forRuntime(err error) error {
	e, ok := rerror.As(err)
	switch {
	case ok && e.Stalling:
		return reconcile.TerminalError(err)
	case ok && e.Waiting:
		return nil
	}
	return err
}

// forRuntimeResult maps a reconcile's result and error together. A wait
// returns no error and res with the wait's requeue (the sooner of the two
// when both ask for one); any other error drops res, which controller-runtime
// ignores beside an error; no error returns res as is.
func forRuntimeResult(res reconcile.Result, err error) (reconcile.Result, error) {
	if err == nil {
		return res, nil
	}
	e, ok := rerror.As(err)
	if !ok || !e.Waiting {
		return reconcile.Result{}, forRuntime(err)
	}
	if d := e.RequeueAfter; d > 0 && (res.RequeueAfter == 0 || d < res.RequeueAfter) {
		res.RequeueAfter = d
	}
	return res, nil
}
