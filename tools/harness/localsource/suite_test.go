package localsource_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/tools/harness/localsource"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) { testenv.Main(m, &env) }

const timeout = 10 * time.Second

// startServer runs a Server until the test ends.
func startServer(t *testing.T, opts localsource.Options) *localsource.Server {
	t.Helper()
	s, err := localsource.New(env.Client, opts)
	require.NoError(t, err)
	require.NoError(t, s.Start())
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// newGitRepository creates a GitRepository following branch.
func newGitRepository(t *testing.T, ns, name, branch string) types.NamespacedName {
	t.Helper()
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: sourcev1.GitRepositorySpec{
			URL:       "https://example.invalid/" + name + ".git",
			Interval:  metav1.Duration{Duration: time.Minute},
			Reference: &sourcev1.GitRepositoryRef{Branch: branch},
		},
	}
	require.NoError(t, env.Client.Create(context.Background(), repo))
	return client.ObjectKeyFromObject(repo)
}

// getGitRepository reads a GitRepository.
func getGitRepository(t *testing.T, key types.NamespacedName) *sourcev1.GitRepository {
	t.Helper()
	repo := &sourcev1.GitRepository{}
	require.NoError(t, env.Client.Get(context.Background(), key, repo))
	return repo
}

// download fetches an artifact URL.
func download(t *testing.T, url string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return data
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// tarEntry is one entry of a downloaded artifact.
type tarEntry struct {
	Name    string
	Mode    int64
	Content string
	ModTime time.Time
	Uid     int
	Uname   string
}

// entries lists a tar.gz's entries in order.
func entries(t *testing.T, data []byte) []tarEntry {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	tr := tar.NewReader(zr)
	var out []tarEntry
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		content, err := io.ReadAll(tr)
		require.NoError(t, err)
		out = append(out, tarEntry{Name: hdr.Name, Mode: hdr.Mode, Content: string(content), ModTime: hdr.ModTime, Uid: hdr.Uid, Uname: hdr.Uname})
	}
}
