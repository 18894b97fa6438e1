package artifact

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExtractSymlinkChainCreatesNothingOutside pins the symlink-chain
// escape: l0 → ".", lN → "l(N-1)/..". Taken literally every target stays in
// the root, but resolved, lN is N levels above it. A link entry under l4/
// must be refused before any directory is made on its way.
func TestExtractSymlinkChainCreatesNothingOutside(t *testing.T) {
	base := t.TempDir()
	// The root sits deep enough that l4 resolves to base itself.
	root := filepath.Join(base, "a", "b", "c", "root")
	entries := []entry{symlink("l0", ".")}
	for i := 1; i <= 4; i++ {
		entries = append(entries, symlink(fmt.Sprintf("l%d", i), fmt.Sprintf("l%d/..", i-1)))
	}
	entries = append(entries, symlink("l4/escaped/deeper/x", "."))
	require.NoError(t, os.MkdirAll(filepath.Dir(root), 0o750))
	before := tree(t, base)

	err := Extract(bytes.NewReader(archive(t, entries...)), root, DefaultLimits())
	require.ErrorIs(t, err, ErrRejected)
	assert.ErrorContains(t, err, `link "l4/escaped/deeper/x"`)

	after := tree(t, base)
	for p := range after {
		if !within(root, p) && p != root {
			assert.Contains(t, before, p, "extraction created %s outside the root", p)
		}
	}
	_, err = os.Lstat(filepath.Join(base, "escaped"))
	assert.True(t, os.IsNotExist(err), "no directory above the root")
}

// tree lists every path under dir, without following links.
func tree(t *testing.T, dir string) map[string]bool {
	t.Helper()
	paths := map[string]bool{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		paths[p] = true
		return err
	}))
	return paths
}
