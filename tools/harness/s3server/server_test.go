package s3server

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSyncMirrorsADirectory(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := Serve(l)
	t.Cleanup(func() { _ = s.Close() })
	dir := t.TempDir()
	write := func(rel, content string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o600))
	}
	keys := func() []string {
		list, err := s.backend.ListBucket("infra", nil, gofakes3.ListBucketPage{})
		require.NoError(t, err)
		var out []string
		for _, o := range list.Contents {
			out = append(out, o.Key)
		}
		return out
	}
	write("main.tf", "a")
	write("envs/dev/main.tf", "b")
	require.NoError(t, s.Sync("infra", dir))
	assert.ElementsMatch(t, []string{"main.tf", "envs/dev/main.tf"}, keys())

	require.NoError(t, os.Remove(filepath.Join(dir, "main.tf")))
	write("release.txt", "v2")
	require.NoError(t, s.Sync("infra", dir))
	assert.ElementsMatch(t, []string{"envs/dev/main.tf", "release.txt"}, keys())
}
