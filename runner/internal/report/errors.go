package report

import (
	"errors"
	"fmt"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Error is a run failure with the RunResult result and reason it maps to.
// Its message must never hold a variable, output or state value.
type Error struct {
	// Result is one of magosv1.ResultFailed, ResultStale or ResultLocked.
	Result string
	// Reason is a CamelCase condition reason, one of the magosv1 Reason constants.
	Reason string
	// LockHolder says who holds the state lock (ResultLocked only).
	LockHolder string
	// Err is the underlying error.
	Err error
}

// Error returns the underlying message.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Failed wraps err as a failed run with reason.
func Failed(reason string, err error) *Error {
	return &Error{Result: magosv1.ResultFailed, Reason: reason, Err: err}
}

// Failedf is Failed with a formatted message.
func Failedf(reason, format string, args ...any) *Error {
	return Failed(reason, fmt.Errorf(format, args...))
}

// Stale wraps err as a run whose plan must be re-planned, not retried.
func Stale(reason string, err error) *Error {
	return &Error{Result: magosv1.ResultStale, Reason: reason, Err: err}
}

// Locked reports that the state lock is held by holder.
func Locked(holder string, err error) *Error {
	return &Error{Result: magosv1.ResultLocked, Reason: magosv1.ReasonStateLocked, LockHolder: holder, Err: err}
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
