// Package workspaceset is the workspaceset-controller: it generates
// Workspaces from a WorkspaceSet's generators and template.
//
// One reconcile observes, then acts: the generators yield the elements
// (generate.go: list, the directories of a source artifact read with the
// same verified, bounded fetch the workspace-controller uses, namespaces,
// matrix and merge), the template is rendered for each (template.go:
// {{param}} replaced in every string, a parameter an element lacks
// refused), and plan.go decides, purely, what to create, update, orphan or
// delete. A generator error changes nothing and stalls the set; an
// element that lacks a parameter or renders an identity the API would not
// take or another element's name (values from repositories: checked,
// never rewritten) is refused alone: the set stalls, the others are
// applied, and nothing is removed until every element renders.
//
// Generated Workspaces are applied server-side with the set's field
// manager and owned by the set: a manual edit of a field the template
// sets is put back (WorkspaceReverted), fields others own (approvals) are
// left alone. Creates come in bursts of at most createBurst, at most one
// burst per set a second (burstInterval), so a set of 1,000 elements does
// not flood the apiserver or the run queue. An element
// that disappears leaves its Workspace under deletionPolicy Orphan (the
// default) and deletes it under Delete, which runs the Workspace's own
// gated destroy if it has destroyOnDelete; a deleted set does the same
// with all of them (finalizer).
package workspaceset
