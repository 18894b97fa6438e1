// Package index holds the watch plumbing several controllers share: field
// indexes, registered once per manager however many controllers of it (as
// in tests) ask for them, and the mapping of listed objects to requests.
package index

import (
	"context"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// WorkspaceProjectRef indexes Workspaces by spec.projectRef.name.
const WorkspaceProjectRef = ".spec.projectRef.name"

// AddWorkspaceProjectRef registers the WorkspaceProjectRef index with mgr
// once, however many controllers of mgr ask for it.
func AddWorkspaceProjectRef(mgr ctrl.Manager) error {
	return addOnce(mgr, WorkspaceProjectRef, func(o client.Object) []string {
		if ws := o.(*magosv1.Workspace); ws.Spec.ProjectRef != nil {
			return []string{ws.Spec.ProjectRef.Name}
		}
		return nil
	})
}

// WorkspaceDependsOn indexes Workspaces by the names in spec.dependsOn.
const WorkspaceDependsOn = ".spec.dependsOn.name"

// AddWorkspaceDependsOn registers the WorkspaceDependsOn index with mgr
// once.
func AddWorkspaceDependsOn(mgr ctrl.Manager) error {
	return addOnce(mgr, WorkspaceDependsOn, func(o client.Object) []string {
		var names []string
		for _, d := range o.(*magosv1.Workspace).Spec.DependsOn {
			names = append(names, d.Name)
		}
		return names
	})
}

// addOnce registers a Workspace field index with mgr. The informer refuses
// an index it has already ("indexer conflict"): that is the index another
// controller of mgr registered, and it is the same one. (Remembering the
// managers that have it by address would not do: a new manager may get a
// stopped one's address.)
func addOnce(mgr ctrl.Manager, field string, extract client.IndexerFunc) error {
	err := mgr.GetFieldIndexer().IndexField(context.Background(), &magosv1.Workspace{}, field, extract)
	if err != nil && strings.Contains(err.Error(), "indexer conflict") {
		return nil
	}
	return err
}

// Requests returns a reconcile request for each listed object.
func Requests[T any, P interface {
	*T
	client.Object
}](items []T) []reconcile.Request {
	reqs := make([]reconcile.Request, 0, len(items))
	for i := range items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(P(&items[i]))})
	}
	return reqs
}
