package rerror

import (
	"errors"
	"time"
)

// Error is a reconcile error with a Reason for conditions and events. It is
// one of three kinds: a retry (neither Stalling nor Waiting), a stall or a
// wait; the constructors set at most one of the two.
type Error struct {
	// Reason is a CamelCase condition reason.
	Reason string
	// Err is the underlying error; its message must be free of secrets.
	Err error
	// Stalling is true when a retry cannot help until the spec changes.
	Stalling bool
	// Waiting is true when the object waits for something outside it; it
	// is not a failure.
	Waiting bool
	// RequeueAfter, for a wait, is when to look again; zero relies on the
	// watches to wake the object.
	RequeueAfter time.Duration
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

// Wait says the object waits for something outside it (a source artifact,
// a Project, a referenced object), with message saying what. It is not a
// failure: status reads Reconciling=True with reason, and the reconcile
// requeues after requeueAfter, or on a watch event when that is zero,
// without an error's backoff.
func Wait(reason, message string, requeueAfter time.Duration) *Error {
	return &Error{Reason: reason, Err: errors.New(message), Waiting: true, RequeueAfter: requeueAfter}
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// IsWaiting reports whether err is a wait.
func IsWaiting(err error) bool {
	e, ok := As(err)
	return ok && e.Waiting
}
