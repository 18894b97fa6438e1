// Package workspaceset is the workspaceset-controller: it generates
// Workspaces from a WorkspaceSet's generators and template.
//
// One reconcile observes, then acts. The planning is pure, in package
// setplan: the generators yield the elements (list, the directories of a
// source artifact, namespaces, matrix and merge), the template is
// rendered for each ({{param}} replaced in every string, a parameter an
// element lacks refused), Plan decides what to create, update, orphan or
// delete, and ComputeStatus sets the status. This package does the I/O:
// it implements setplan.Sources on the cluster (directories read with the
// same verified, bounded fetch the workspace-controller uses), lists the
// live Workspaces and applies the plan. A generator error changes nothing
// and stalls the set; an element that lacks a parameter or renders an
// identity the API would not take or another element's name (values from
// repositories: checked, never rewritten) is refused alone: the set
// stalls, the others are applied, and nothing is removed until every
// element renders.
//
// Generated Workspaces are applied server-side with the set's field
// manager and owned by the set: a manual edit of a field the template
// sets is put back (WorkspaceReverted), fields others own (approvals) are
// left alone. Creates come in bursts (setplan.Plan bounds each), at most
// one burst per set a second (burstInterval), so a set of 1,000 elements
// does not flood the apiserver or the run queue. An element that
// disappears leaves its Workspace under deletionPolicy Orphan (the
// default) and deletes it under Delete, which runs the Workspace's own
// gated destroy if it has destroyOnDelete; a deleted set does the same
// with all of them (finalizer).
package workspaceset
