// Package e2e runs the runner binary as a process against the local
// control plane and the real OpenTofu: plan, apply, stale and locked runs,
// destroy, and refused artifacts, checking that a sensitive value never
// reaches the output or the run result.
package e2e
