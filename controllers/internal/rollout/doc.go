// Package rollout holds the rollout-controller: it orders a Project's
// Workspaces into a Rollout's stages by label and admits the newest source
// revision stage by stage, writing only Rollout status. The
// workspace-controller reads that status (see Admission) and applies a
// revision only where it is admitted. Rollouts never run Terraform and never
// write a Workspace.
//
// The reconciler observes and acts: it stages the Workspaces, reads the
// source revision, and hands what it saw to the pure progress package,
// which advances the stages and computes the status.
package rollout
