package rerror

import (
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Error is a reconcile error with a Reason for conditions and events.
type Error struct {
	// Reason is a CamelCase condition reason.
	Reason string
	// Err is the underlying error; its message must be free of secrets.
	Err error
	// Stalling is true when a retry cannot help until the spec changes.
	Stalling bool
}

// Error returns the underlying message.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Retry wraps err as a transient failure to be retried with backoff.
func Retry(reason string, err error) *Error { return &Error{Reason: reason, Err: err} }

// Stall wraps err as a failure that needs a spec change.
func Stall(reason string, err error) *Error {
	return &Error{Reason: reason, Err: err, Stalling: true}
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ForRuntime maps err to what controller-runtime expects: stalling errors
// become terminal (no requeue), others are returned for backoff.
func ForRuntime(err error) error {
	if e, ok := As(err); ok && e.Stalling {
		return reconcile.TerminalError(err)
	}
	return err
}
