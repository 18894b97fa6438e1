package realnode

import (
	"context"
	"io"
	"log"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/tools/harness/realnode"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// TestOCIRepositoryDeliversToWorkspace: a configuration pushed with
// `flux push artifact` to an OCI registry on the node's network (an
// in-process registry, go-containerregistry's) is pulled by
// source-controller through an OCIRepository, and a Workspace reading the
// OCIRepository applies it; a new tag pushed and selected applies too.
func TestOCIRepositoryDeliversToWorkspace(t *testing.T) {
	ctx := context.Background()
	requireSourceController(t)
	ns := newNamespace(t)
	l, err := node.Listen("tcp", realnode.NodeIP+":0")
	require.NoError(t, err)
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0))), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	reg := l.Addr().String()

	content := t.TempDir()
	push := func(tag, release string) {
		t.Helper()
		writeRelease(t, content, release)
		runFlux(t, "push", "artifact", "oci://"+reg+"/infra:"+tag, "--path="+content,
			"--source=https://git.example/infra", "--revision="+tag+"@sha1:0123456789abcdef0123456789abcdef01234567", "--insecure-registry")
	}
	push("v1", "oci-v1")

	repo := &unstructured.Unstructured{}
	repo.SetGroupVersionKind(fluxsource.GroupVersion.WithKind("OCIRepository"))
	repo.SetNamespace(ns)
	repo.SetName("infra")
	require.NoError(t, unstructured.SetNestedMap(repo.Object, map[string]any{
		"url": "oci://" + reg + "/infra", "ref": map[string]any{"tag": "v1"}, "interval": "1m", "insecure": true,
	}, "spec"))
	require.NoError(t, k8s.Create(ctx, repo))
	ready := func(u *unstructured.Unstructured) bool {
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		return observed == u.GetGeneration() && fluxsource.ReadArtifact(u).Revision != ""
	}
	testenv.WaitFor(t, k8s, client.ObjectKeyFromObject(repo), repo, 2*time.Minute, 200*time.Millisecond, ready,
		"source-controller pulled no artifact of the OCIRepository")
	first := fluxsource.ReadArtifact(repo).Revision
	assert.Contains(t, first, "v1@sha256:", "the OCIRepository's revision is the tag and the manifest digest")

	require.NoError(t, k8s.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: ns},
		Spec: magosv1.WorkspaceSpec{
			SourceRef: magosv1.SourceReference{Kind: "OCIRepository", Name: "infra"},
			Outputs:   &magosv1.OutputsSpec{SecretName: "release-outputs"},
		},
	}))
	waitWorkspace(t, ns, "release", 5*time.Minute, "applies the pushed artifact", applied(first))
	assertOutput(t, ns, "release-outputs", "release", ":oci-v1")

	// A new tag, selected by the OCIRepository.
	push("v2", "oci-v2")
	require.NoError(t, k8s.Get(ctx, client.ObjectKeyFromObject(repo), repo))
	patch := client.MergeFrom(repo.DeepCopy())
	require.NoError(t, unstructured.SetNestedField(repo.Object, "v2", "spec", "ref", "tag"))
	require.NoError(t, k8s.Patch(ctx, repo, patch))
	testenv.WaitFor(t, k8s, client.ObjectKeyFromObject(repo), repo, 2*time.Minute, 200*time.Millisecond, func(u *unstructured.Unstructured) bool {
		return ready(u) && fluxsource.ReadArtifact(u).Revision != first
	}, "source-controller pulled no artifact of the new tag")
	second := fluxsource.ReadArtifact(repo).Revision
	waitWorkspace(t, ns, "release", 5*time.Minute, "applies the new tag", applied(second))
	assertOutput(t, ns, "release-outputs", "release", ":oci-v2")
}
