package failure

import (
	"errors"
	"fmt"
	"strings"
)

// Exit codes of kubectl-magos.
const (
	ExitOK      = 0
	ExitFailure = 1 // a refusal, a failed Workspace, a timeout, an API error
	ExitUsage   = 2 // wrong arguments or flags
)

// Reasons of an Error.
const (
	ReasonUsage    = "Usage"
	ReasonRefused  = "Refused"  // the command would do something wrong or nothing
	ReasonFailed   = "Failed"   // what the command waited for failed
	ReasonTimeout  = "Timeout"  // what the command waited for did not happen in time
	ReasonNotFound = "NotFound" // the object or what the command reads is not there
)

// Error is a command's failure: a reason, the exit code it ends with and a
// message that says what to do.
type Error struct {
	Reason string
	Code   int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// New is an Error with code, reason and a formatted message.
func New(code int, reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Usage is wrong arguments or flags: exit code 2.
func Usage(format string, args ...any) error {
	return New(ExitUsage, ReasonUsage, format, args...)
}

// Refused is a command that would do something wrong or nothing.
func Refused(format string, args ...any) error {
	return New(ExitFailure, ReasonRefused, format, args...)
}

// Failed is a failure of what the command did or waited for.
func Failed(format string, args ...any) error {
	return New(ExitFailure, ReasonFailed, format, args...)
}

// NotFound is an object, or what the command reads, that is not there.
func NotFound(format string, args ...any) error {
	return New(ExitFailure, ReasonNotFound, format, args...)
}

// ExitCode is the exit code err ends the process with. Cobra's own
// complaints about commands are usage errors.
func ExitCode(err error) int {
	var e *Error
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &e):
		return e.Code
	case strings.HasPrefix(err.Error(), "unknown command"), strings.HasPrefix(err.Error(), "unknown shorthand flag"),
		strings.HasPrefix(err.Error(), "unknown flag"):
		return ExitUsage
	default:
		return ExitFailure
	}
}
