// Package setplan is the workspaceset-controller's pure planning: what a
// WorkspaceSet's Workspaces should be, and what a reconcile changes.
//
// Generate yields the elements of the set's generators (list,
// directories, namespaces, matrix and merge), bounded by spec.maxElements
// before a matrix or merge is expanded; RenderAll renders the template for
// each ({{param}} replaced in every string), refusing alone an element
// that lacks a parameter, renders an identity the API would not take or
// another element's name; Plan compares the rendered Workspaces with the
// live ones (create in bursts, revert, remove, conflicts); ComputeStatus
// turns what the reconcile saw into the set's status. It does no I/O but
// through Sources, which the reconciler implements on the cluster.
package setplan
