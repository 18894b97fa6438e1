// Package workspace is the workspace-controller: it turns a Workspace and
// its Flux artifact into plan and apply runs, each a Job of the runner with
// the Workspace's own ServiceAccount and least-privilege Role, and reports
// the outcome in status, conditions, events and metrics.
package workspace
