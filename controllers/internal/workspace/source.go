package workspace

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/index"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
)

// contentOf is what ws reads in art (configtree), each artifact read once
// for all Workspaces; unknown, so that nothing carries, without Trees or
// when the artifact cannot be read (logged: the run reads it itself).
func (r *Reconciler) contentOf(ctx context.Context, ws *magosv1.Workspace, art artifact) *decide.ContentCheck {
	if r.Trees == nil || art.URL == "" {
		return &decide.ContentCheck{}
	}
	tree, err := r.Trees.Tree(ctx, art.URL, art.Digest)
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("Could not read the artifact for what the Workspace reads: a new revision is planned whatever it changes",
			"revision", art.Revision, "error", err.Error())
		return &decide.ContentCheck{}
	}
	digest, dirs := tree.Digest(ws.Spec.Path)
	return &decide.ContentCheck{Digest: digest, Dirs: dirs}
}

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
		if err := r.List(ctx, &list, client.MatchingFields{sourceRefIndex: fluxsource.Key(kind, o.GetNamespace(), o.GetName())}, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Failed to list Workspaces for source", "source", o.GetName())
			return nil
		}
		return index.Requests(list.Items)
	}
}
