package sourcecontroller_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/magos-dev/magos/apis/artifactdigest"
	"github.com/magos-dev/magos/tools/harness/sourcecontroller"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) { testenv.Main(m, &env) }

// TestPublishMakesAnArtifact: a published directory becomes, through
// source-controller's clone, the GitRepository's artifact, with the
// commit as its revision, a digest in the instance's algorithm and the
// directory's files; a second publish is a new revision.
func TestPublishMakesAnArtifact(t *testing.T) {
	ctx := context.Background()
	ns := env.NewNamespace(t)
	for _, algo := range []string{"sha256", "sha384"} {
		t.Run(algo, func(t *testing.T) {
			opts := sourcecontroller.Options{Kubeconfig: env.Kubeconfig, DigestAlgorithm: algo}
			if algo != "sha256" {
				opts.Shard = algo
			}
			sc, err := sourcecontroller.Start(opts)
			require.NoError(t, err)
			t.Cleanup(func() { _ = sc.Stop() })

			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte("# "+algo+"\n"), 0o644))
			key := types.NamespacedName{Namespace: ns, Name: "infra-" + algo}
			first, err := sc.Publish(ctx, env.Client, key, dir)
			require.NoError(t, err)
			assert.Regexp(t, `^main@sha1:[0-9a-f]{40}$`, first)

			var repo sourcev1.GitRepository
			require.NoError(t, env.Client.Get(ctx, key, &repo))
			art := repo.Status.Artifact
			require.NotNil(t, art)
			assert.Equal(t, first, art.Revision)
			assert.True(t, strings.HasPrefix(art.URL, sc.StorageURL+"/gitrepository/"+ns+"/"), "served at its storage address: %s", art.URL)
			assert.True(t, strings.HasPrefix(art.Digest, algo+":"), "digest in %s: %s", algo, art.Digest)
			files := fetch(t, art.URL, art.Digest)
			assert.Equal(t, "# "+algo+"\n", files["main.tf"])

			second, err := sc.Publish(ctx, env.Client, key, dir)
			require.NoError(t, err)
			assert.NotEqual(t, first, second, "every publish is a commit")
		})
	}
}

// fetch downloads an artifact, checks its digest and returns its files.
func fetch(t *testing.T, url, digest string) map[string]string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	d, err := artifactdigest.Parse(digest)
	require.NoError(t, err)
	require.Equal(t, digest, artifactdigest.Of(d.Algorithm, data), "the bytes have the digest in status")
	zr, err := gzip.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	files := map[string]string{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		files[h.Name] = string(b)
	}
	return files
}
