package engine

import (
	"regexp"
	"strings"
)

// IsStalePlan reports whether err is the engine refusing a saved plan
// because the state changed after it was made.
func IsStalePlan(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Saved plan is stale")
}

// IsLockError reports whether err is the engine failing to take the state
// lock.
func IsLockError(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Error acquiring the state lock")
}

// whoLine finds "Who: user@host" in the engine's lock error.
var whoLine = regexp.MustCompile(`(?m)^[\s│]*Who:\s*(\S.*?)\s*$`)
var idLine = regexp.MustCompile(`(?m)^[\s│]*ID:\s*(\S.*?)\s*$`)

// LockHolder extracts who holds the lock from the engine's lock error, for
// backends other than the runner's own.
func LockHolder(err error) string {
	if err == nil {
		return ""
	}
	var who, id string
	if m := whoLine.FindStringSubmatch(err.Error()); m != nil {
		who = m[1]
	}
	if m := idLine.FindStringSubmatch(err.Error()); m != nil {
		id = m[1]
	}
	switch {
	case who != "" && id != "":
		return who + " (lock ID " + id + ")"
	case who != "":
		return who
	default:
		return id
	}
}

// Summary shortens an engine error to its diagnostics' summary lines
// ("Error: ..."), which is what a person needs in a status message; the
// full output is in the run's log.
func Summary(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	var summaries []string
	seen := map[string]bool{}
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(strings.TrimLeft(line, " │╷╵"))
		if s, ok := strings.CutPrefix(line, "Error: "); ok && !seen[s] {
			seen[s] = true
			summaries = append(summaries, s)
		}
	}
	if len(summaries) == 0 {
		// No diagnostics: the first line (e.g. "exit status 1") is all there is.
		first, _, _ := strings.Cut(msg, "\n")
		return first
	}
	return strings.Join(summaries, "; ")
}
