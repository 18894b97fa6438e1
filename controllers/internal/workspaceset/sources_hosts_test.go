package workspaceset

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/artifacthost"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
)

// TestDirectoriesAreReadOnlyFromTheArtifactHosts: a directories generator
// downloads its source's artifact only from the hosts the admin lists
// (--artifact-hosts, by default source-controller's Service in
// flux-system) and follows no redirect: a tenant who may write its
// source's status.artifact.url (Flux's flux-edit role) cannot make the
// controller fetch from anywhere else.
func TestDirectoriesAreReadOnlyFromTheArtifactHosts(t *testing.T) {
	var c Controller
	fs := flag.NewFlagSet("workspaceset-controller", flag.ContinueOnError)
	c.BindFlags(fs)
	require.NoError(t, fs.Parse(nil))
	assert.Equal(t, artifacthost.DefaultHosts, c.ArtifactHosts, "source-controller's Service in flux-system by default")

	data := artifact(t, "envs/dev/main.tf", "envs/prod/main.tf")
	var served, redirected atomic.Int32
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere/a.tar.gz" {
			redirected.Add(1)
			http.Redirect(w, r, "/gitrepository/ns/infra/a.tar.gz", http.StatusFound)
			return
		}
		served.Add(1)
		_, _ = w.Write(data)
	}))
	defer storage.Close()
	sources := func(url string) *fake.ClientBuilder {
		repo := fluxsource.NewObject("GitRepository")
		repo.SetNamespace("ns")
		repo.SetName("infra")
		require.NoError(t, unstructured.SetNestedMap(repo.Object, map[string]any{
			"url": url, "revision": "main@sha1:abc", "digest": "sha256:" + sha256Hex(data),
		}, "status", "artifact"))
		return fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithObjects(repo)
	}
	ref := magosv1.SourceReference{Kind: "GitRepository", Name: "infra"}

	dirs, err := newSources(sources(storage.URL+"/gitrepository/ns/infra/a.tar.gz").Build(), artifacthost.Hosts{"127.0.0.1"}).Dirs(context.Background(), "ns", ref)
	require.NoError(t, err)
	assert.Contains(t, dirs, "envs/dev", "a listed host is read")
	require.EqualValues(t, 1, served.Load())

	_, err = newSources(sources(storage.URL+"/gitrepository/ns/infra/b.tar.gz").Build(), artifacthost.DefaultHosts).Dirs(context.Background(), "ns", ref)
	assert.True(t, errors.Is(err, artifacthost.ErrNotAllowed), "a host not listed: %v", err)
	assert.EqualValues(t, 1, served.Load(), "is not asked")

	_, err = newSources(sources(storage.URL+"/elsewhere/a.tar.gz").Build(), artifacthost.Hosts{"127.0.0.1"}).Dirs(context.Background(), "ns", ref)
	assert.Error(t, err, "a redirect is an error")
	assert.EqualValues(t, 1, redirected.Load())
	assert.EqualValues(t, 1, served.Load(), "its target is not asked")
}

// artifact is a tar.gz holding an empty file at each of paths.
func artifact(t *testing.T, paths ...string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, p := range paths {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: p, Mode: 0o644, Typeflag: tar.TypeReg}))
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
