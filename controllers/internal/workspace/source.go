package workspace

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/index"
)

// sourceRefIndex indexes Workspaces by "<kind>/<namespace>/<name>" of their source.
const sourceRefIndex = ".spec.sourceRef"

// artifact is the Flux artifact a run works on.
type artifact = fluxsource.Artifact

func indexSourceRefs(mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(context.Background(), &magosv1.Workspace{}, sourceRefIndex,
		func(o client.Object) []string { return []string{fluxsource.KeyOf(o.(*magosv1.Workspace))} })
}

// workspacesForSource maps a source event to the Workspaces that use it.
func (r *Reconciler) workspacesForSource(kind string) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var list magosv1.WorkspaceList
		if err := r.List(ctx, &list, client.MatchingFields{sourceRefIndex: fluxsource.Key(kind, o.GetNamespace(), o.GetName())}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Failed to list Workspaces for source", "source", o.GetName())
			return nil
		}
		return index.Requests(list.Items)
	}
}
