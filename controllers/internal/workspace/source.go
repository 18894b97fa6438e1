package workspace

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// sourceGroupVersion is the Flux source API Magos reads.
var sourceGroupVersion = schema.GroupVersion{Group: "source.toolkit.fluxcd.io", Version: "v1"}

// sourceKinds are the Flux source kinds a Workspace may reference.
var sourceKinds = []string{"GitRepository", "OCIRepository", "Bucket"}

// sourceRefIndex indexes Workspaces by "<kind>/<namespace>/<name>" of their source.
const sourceRefIndex = ".spec.sourceRef"

func newSourceObject(kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(sourceGroupVersion.WithKind(kind))
	return u
}

func sourceKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func sourceNamespace(ws *magosv1.Workspace) string {
	if ws.Spec.SourceRef.Namespace != "" {
		return ws.Spec.SourceRef.Namespace
	}
	return ws.Namespace
}

func indexSourceRefs(mgr ctrl.Manager) error {
	return mgr.GetFieldIndexer().IndexField(context.Background(), &magosv1.Workspace{}, sourceRefIndex,
		func(o client.Object) []string {
			ws := o.(*magosv1.Workspace)
			return []string{sourceKey(ws.Spec.SourceRef.Kind, sourceNamespace(ws), ws.Spec.SourceRef.Name)}
		})
}

// workspacesForSource maps a source event to the Workspaces that use it.
func (r *Reconciler) workspacesForSource(kind string) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var list magosv1.WorkspaceList
		if err := r.List(ctx, &list, client.MatchingFields{sourceRefIndex: sourceKey(kind, o.GetNamespace(), o.GetName())}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Failed to list Workspaces for source", "source", o.GetName())
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for _, ws := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ws.Namespace, Name: ws.Name}})
		}
		return reqs
	}
}

// artifactChanged passes source events whose artifact revision or digest changed.
type artifactChanged struct{ predicate.Funcs }

func (artifactChanged) Update(e event.UpdateEvent) bool {
	return readArtifact(e.ObjectOld) != readArtifact(e.ObjectNew)
}

// artifact is the part of a Flux source's status Magos uses.
type artifact struct {
	URL, Revision, Digest string
}

func readArtifact(o client.Object) artifact {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return artifact{}
	}
	get := func(f string) string {
		v, _, _ := unstructured.NestedString(u.Object, "status", "artifact", f)
		return v
	}
	return artifact{URL: get("url"), Revision: get("revision"), Digest: get("digest")}
}

// errSourceNotReady says the source has no usable artifact yet.
type errSourceNotReady struct{ msg string }

func (e errSourceNotReady) Error() string { return e.msg }

// fetchArtifact reads the Workspace's source and returns its artifact.
func (r *Reconciler) fetchArtifact(ctx context.Context, ws *magosv1.Workspace) (artifact, error) {
	src := newSourceObject(ws.Spec.SourceRef.Kind)
	key := types.NamespacedName{Namespace: sourceNamespace(ws), Name: ws.Spec.SourceRef.Name}
	if err := r.Get(ctx, key, src); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return artifact{}, errSourceNotReady{fmt.Sprintf("%s %s not found", ws.Spec.SourceRef.Kind, key)}
		}
		return artifact{}, err
	}
	a := readArtifact(src)
	if a.URL == "" || a.Revision == "" || a.Digest == "" {
		return artifact{}, errSourceNotReady{fmt.Sprintf("%s %s has no artifact yet", ws.Spec.SourceRef.Kind, key)}
	}
	return a, nil
}
