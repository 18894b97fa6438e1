// Package index holds the watch plumbing several controllers share: field
// indexes, registered once per manager however many controllers of it (as
// in tests) ask for them, and the mapping of listed objects to requests.
package index

import (
	"context"
	"fmt"
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// WorkspaceProjectRef indexes Workspaces by spec.projectRef.name.
const WorkspaceProjectRef = ".spec.projectRef.name"

var registered sync.Map

// AddWorkspaceProjectRef registers the WorkspaceProjectRef index with mgr
// once, however many controllers of mgr ask for it.
func AddWorkspaceProjectRef(mgr ctrl.Manager) error {
	indexer := mgr.GetFieldIndexer()
	if _, done := registered.LoadOrStore(fmt.Sprintf("%p/%s", indexer, WorkspaceProjectRef), true); done {
		return nil
	}
	return indexer.IndexField(context.Background(), &magosv1.Workspace{}, WorkspaceProjectRef, func(o client.Object) []string {
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
	indexer := mgr.GetFieldIndexer()
	if _, done := registered.LoadOrStore(fmt.Sprintf("%p/%s", indexer, WorkspaceDependsOn), true); done {
		return nil
	}
	return indexer.IndexField(context.Background(), &magosv1.Workspace{}, WorkspaceDependsOn, func(o client.Object) []string {
		var names []string
		for _, d := range o.(*magosv1.Workspace).Spec.DependsOn {
			names = append(names, d.Name)
		}
		return names
	})
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
