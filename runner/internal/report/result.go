package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// MaxBytes is the most the kubelet keeps of a termination message.
const MaxBytes = 4096

const truncatedSuffix = " …(truncated)"

// FromError fills the result fields of r from err: Result, Reason, Message
// and LockHolder. A nil err means success. An error that is not an *Error
// is reported as Failed with fallbackReason.
func FromError(r *magosv1.RunResult, err error, fallbackReason string) {
	if err == nil {
		r.Result = magosv1.ResultSucceeded
		if r.Reason == "" {
			r.Reason = magosv1.ReasonSucceeded
		}
		return
	}
	r.Message = err.Error()
	if e, ok := As(err); ok {
		r.Result, r.Reason, r.LockHolder = e.Result, e.Reason, e.LockHolder
		return
	}
	r.Result, r.Reason = magosv1.ResultFailed, fallbackReason
}

// maxLockHolder bounds the lock holder, which comes from a Lease annotation.
const maxLockHolder = 512

// Encode marshals r to JSON of at most MaxBytes, shortening the lock holder,
// the message and then the output names if needed. It never drops the
// result or reason.
func Encode(r magosv1.RunResult) ([]byte, error) {
	r.LockHolder = truncate(r.LockHolder, maxLockHolder)
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	for len(b) > MaxBytes {
		switch {
		case r.Message != "":
			// JSON escaping can grow a message, so cut by the excess and retry.
			excess := len(b) - MaxBytes + len(truncatedSuffix)
			r.Message = truncate(r.Message, len(r.Message)-excess)
		case len(r.Outputs) > 0:
			r.Outputs = r.Outputs[:len(r.Outputs)-1]
			r.Message = "output names truncated"
		default:
			return nil, errors.New("run result does not fit a termination message")
		}
		if b, err = json.Marshal(r); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// truncate cuts s to at most n bytes on a rune boundary and marks the cut.
func truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + truncatedSuffix
}

// Write encodes r and writes it to path (the termination message file).
func Write(path string, r magosv1.RunResult) error {
	b, err := Encode(r)
	if err != nil {
		return err
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating the directory of %s: %w", path, err)
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing the run result to %s: %w", path, err)
	}
	return nil
}

// ExitCode is the process exit code for a result: 0 on success, 1 when the
// run failed, 4 when the plan is stale and 5 when the state is locked.
func ExitCode(result string) int {
	switch result {
	case magosv1.ResultSucceeded:
		return magosv1.ExitSucceeded
	case magosv1.ResultStale:
		return magosv1.ExitStale
	case magosv1.ResultLocked:
		return magosv1.ExitLocked
	default:
		return magosv1.ExitFailed
	}
}
