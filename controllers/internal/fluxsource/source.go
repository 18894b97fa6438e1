package fluxsource

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// GroupVersion is the Flux source API Magos reads.
var GroupVersion = schema.GroupVersion{Group: "source.toolkit.fluxcd.io", Version: "v1"}

// Kinds are the Flux source kinds a Workspace may reference.
var Kinds = []string{"GitRepository", "OCIRepository", "Bucket", "ExternalArtifact"}

// NewObject returns an empty source object of kind.
func NewObject(kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(GroupVersion.WithKind(kind))
	return u
}

// firstFluxServing is the first Flux release serving kind in GroupVersion.
func firstFluxServing(kind string) string {
	if kind == "ExternalArtifact" {
		return "2.7"
	}
	return "2.6"
}

// Key names a source as "<kind>/<namespace>/<name>".
func Key(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// Namespace is the namespace of the Workspace's source.
func Namespace(ws *magosv1.Workspace) string {
	if ws.Spec.SourceRef.Namespace != "" {
		return ws.Spec.SourceRef.Namespace
	}
	return ws.Namespace
}

// KeyOf names the Workspace's source.
func KeyOf(ws *magosv1.Workspace) string {
	return Key(ws.Spec.SourceRef.Kind, Namespace(ws), ws.Spec.SourceRef.Name)
}

// Artifact is the part of a Flux source's status Magos uses.
type Artifact struct {
	URL, Revision, Digest string
}

// ReadArtifact returns the artifact in a source object's status.
func ReadArtifact(o client.Object) Artifact {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return Artifact{}
	}
	get := func(f string) string {
		v, _, _ := unstructured.NestedString(u.Object, "status", "artifact", f)
		return v
	}
	return Artifact{URL: get("url"), Revision: get("revision"), Digest: get("digest")}
}

// ArtifactChanged passes source events whose artifact revision or digest changed.
type ArtifactChanged struct{ predicate.Funcs }

// Update passes when the artifact changed.
func (ArtifactChanged) Update(e event.UpdateEvent) bool {
	return ReadArtifact(e.ObjectOld) != ReadArtifact(e.ObjectNew)
}

// NotReadyError says the source has no usable artifact yet.
type NotReadyError struct{ Msg string }

func (e NotReadyError) Error() string { return e.Msg }

// Fetch reads the Workspace's source and returns its artifact, or a
// NotReadyError when the source is missing or has no artifact.
func Fetch(ctx context.Context, c client.Reader, ws *magosv1.Workspace) (Artifact, error) {
	return FetchRef(ctx, c, ws.Spec.SourceRef.Kind, Namespace(ws), ws.Spec.SourceRef.Name)
}

// FetchRef reads the source kind namespace/name and returns its artifact,
// or a NotReadyError when the source is missing or has no artifact.
func FetchRef(ctx context.Context, c client.Reader, kind, namespace, name string) (Artifact, error) {
	src := NewObject(kind)
	key := types.NamespacedName{Namespace: namespace, Name: name}
	if err := c.Get(ctx, key, src); err != nil {
		if meta.IsNoMatchError(err) {
			return Artifact{}, NotReadyError{fmt.Sprintf("the cluster does not serve %s (%s): install Flux's CRDs (Flux %s or later); %s %s is read once they are",
				kind, GroupVersion, firstFluxServing(kind), kind, key)}
		}
		if apierrors.IsNotFound(err) {
			return Artifact{}, NotReadyError{fmt.Sprintf("%s %s not found", kind, key)}
		}
		return Artifact{}, err
	}
	a := ReadArtifact(src)
	if a.URL == "" || a.Revision == "" || a.Digest == "" {
		return Artifact{}, NotReadyError{fmt.Sprintf("%s %s has no artifact yet", kind, key)}
	}
	return a, nil
}
