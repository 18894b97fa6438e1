// Package workspace holds the workspace-controller's reconcilers. This release
// registers the shared observing reconciler for Workspaces: it validates,
// sets observedGeneration and conditions, and does not act yet (Workspace runs
// arrive in later releases).
package workspace
