package command

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

func newError(code int, reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Code: code, Msg: fmt.Sprintf(format, args...)}
}

func usageError(format string, args ...any) error {
	return newError(ExitUsage, ReasonUsage, format, args...)
}

func refused(format string, args ...any) error {
	return newError(ExitFailure, ReasonRefused, format, args...)
}

func failed(format string, args ...any) error {
	return newError(ExitFailure, ReasonFailed, format, args...)
}

// exitCode is the exit code err ends the process with. Cobra's own
// complaints about commands are usage errors.
func exitCode(err error) int {
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
