// Package report holds the runner's outcome: typed errors that carry a
// RunResult result and a condition reason, and the writer of the RunResult
// JSON that the kubelet turns into the container's termination message.
package report
