package artifactproxy

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
)

func TestOfSource(t *testing.T) {
	repo := fluxsource.NewObject("GitRepository")
	repo.SetNamespace("team-a")
	repo.SetName("infra")
	require.NoError(t, unstructured.SetNestedMap(repo.Object, map[string]any{
		"url": "http://source-controller.flux-system/gitrepository/team-a/infra/abc.tar.gz", "revision": "main@sha1:abc", "digest": "sha256:abc",
	}, "status", "artifact"))
	reader := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(repo).Build()
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "ws"},
		Spec: magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"}}}

	for url, ok := range map[string]bool{
		"http://source-controller.flux-system/gitrepository/team-a/infra/abc.tar.gz":           true,
		"http://source-controller.flux-system/gitrepository/team-a/infra/older.tar.gz":         true,
		"http://source-controller.flux-system/gitrepository/team-a/infra/sha256:5862d7.tar.gz": true,
		"http://source-controller.flux-system/gitrepository/team-a/infra/a:b:c.tar.gz":         false,
		"http://source-controller.flux-system/gitrepository/team-b/infra/abc.tar.gz":           false,
		"http://source-controller.flux-system/gitrepository/team-a/infra-b/abc.tar.gz":         false,
		"http://source-controller.flux-system/ocirepository/team-a/infra/abc.tar.gz":           false,
		"http://source-controller.flux-system/gitrepository/team-a/infra/../../team-b/x/a.gz":  false,
		"http://source-controller.flux-system/gitrepository/team-a/infra/%2e%2e/x.tar.gz":      false,
		"http://elsewhere.example/gitrepository/team-a/infra/abc.tar.gz":                       false,
		"https://source-controller.flux-system/gitrepository/team-a/infra/abc.tar.gz":          false,
		"http://u:p@source-controller.flux-system/gitrepository/team-a/infra/abc.tar.gz":       false,
		// Artifact files only: never a directory (source-controller's file
		// server lists it), a deeper path, another kind of file or a query.
		"http://source-controller.flux-system/gitrepository/team-a/infra/":                 false,
		"http://source-controller.flux-system/gitrepository/team-a/infra/sub/abc.tar.gz":   false,
		"http://source-controller.flux-system/gitrepository/team-a/infra/sub/":             false,
		"http://source-controller.flux-system/gitrepository/team-a/infra/abc":              false,
		"http://source-controller.flux-system/gitrepository/team-a/infra/.tar.gz":          false,
		"http://source-controller.flux-system/gitrepository/team-a/infra/abc.tar.gz?x=1":   false,
		"http://source-controller.flux-system/gitrepository/team-a/infra/abc.tar.gz#x":     false,
		"http://source-controller.flux-system/gitrepository/team-a/infra/abc-1.2_x.tar.gz": true,
	} {
		err := ofSource(context.Background(), reader, ws, url)
		if ok {
			assert.NoError(t, err, url)
		} else {
			assert.Error(t, err, url)
		}
	}

	missing := ws.DeepCopy()
	missing.Spec.SourceRef.Name = "gone"
	assert.Error(t, ofSource(context.Background(), reader, missing, "http://source-controller.flux-system/gitrepository/team-a/gone/a.tar.gz"),
		"no source, no artifact")
}

func TestServiceAccountOf(t *testing.T) {
	ns, name, ok := serviceAccountOf("system:serviceaccount:team-a:magos-runner-ws")
	assert.True(t, ok)
	assert.Equal(t, []string{"team-a", "magos-runner-ws"}, []string{ns, name})
	for _, u := range []string{"alice", "system:serviceaccount:team-a", "system:serviceaccount::x", "system:node:n1"} {
		_, _, ok := serviceAccountOf(u)
		assert.False(t, ok, u)
	}
}
