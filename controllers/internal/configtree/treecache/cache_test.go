package treecache

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/apis/artifactdigest"
	"github.com/magos-dev/magos/controllers/internal/configtree"
)

// artifact is a small artifact of two Workspaces' directories.
func artifact(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, content := range map[string]string{"envs/prod/main.tf": "locals {}\n", "envs/dev/main.tf": "locals {}\n"} {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(content))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func serve(t *testing.T, data []byte) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestCacheReadsEachArtifactOnce(t *testing.T) {
	data := artifact(t)
	srv, requests := serve(t, data)
	c := &Cache{}
	for _, algo := range []string{"sha256", "blake3"} {
		digest := artifactdigest.Of(algo, data)
		for range 3 {
			tree, err := c.Tree(context.Background(), srv.URL, digest)
			require.NoError(t, err)
			got := tree.Content("envs/prod", configtree.Options{}).Digest
			assert.NotEmpty(t, got)
		}
	}
	assert.Equal(t, int32(2), requests.Load(), "one download per artifact digest")
}

func TestCacheRefusesAWrongDigestOrAnOversizeArtifact(t *testing.T) {
	data := artifact(t)
	srv, requests := serve(t, data)
	c := &Cache{}
	_, err := c.Tree(context.Background(), srv.URL, artifactdigest.Of("sha256", []byte("other")))
	require.ErrorIs(t, err, artifactdigest.ErrMismatch)
	_, err = c.Tree(context.Background(), srv.URL, artifactdigest.Of("sha256", []byte("other")))
	require.Error(t, err)
	assert.Equal(t, int32(2), requests.Load(), "a failed read is not cached")

	small := &Cache{MaxBytes: int64(len(data) - 1)}
	_, err = small.Tree(context.Background(), srv.URL, artifactdigest.Of("sha256", data))
	require.ErrorIs(t, err, artifactdigest.ErrTooLarge)
}
