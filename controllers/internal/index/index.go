// Package index holds the field indexes several controllers share, so that
// controllers running in one manager (as in tests) register each only once.
package index

import (
	"context"
	"fmt"
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
