// Package failure is how kubectl-magos fails: an Error with a reason
// (Usage, Refused, Failed, Timeout, NotFound) and the exit code it ends
// the process with (0 success, 1 a refusal or a failure, 2 wrong usage).
// The commands, the operations and the UI return these errors; the root
// command turns them into the exit code.
package failure
