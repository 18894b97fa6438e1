// Package project is the project-controller: it resolves what a Project's
// member Workspaces inherit (shared VariableSets, defaults, policy
// selector, source allow-list, allowed ServiceAccount annotations) into
// status, where the workspace-controller reads it, reports whether the
// shared VariableSets are Ready, and rolls up the state of the member
// Workspaces. Projects never execute anything.
package project
