package configtree

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Entry kinds in test file maps: a value starting with one of these
// prefixes makes a link instead of a regular file.
const (
	symlinkTo  = "\x00symlink:"
	hardlinkTo = "\x00hardlink:"
)

// tarball packs files (path → content, or a link) as a Flux artifact, in
// name order.
func tarball(t testing.TB, files map[string]string) []byte {
	t.Helper()
	names := slices.Sorted(maps.Keys(files))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, name := range names {
		content := files[name]
		var err error
		switch {
		case strings.HasPrefix(content, symlinkTo):
			err = tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: content[len(symlinkTo):], Mode: 0o777})
		case strings.HasPrefix(content, hardlinkTo):
			err = tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeLink, Linkname: content[len(hardlinkTo):], Mode: 0o644})
		default:
			err = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg})
			if err == nil {
				_, err = tw.Write([]byte(content))
			}
		}
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func read(t testing.TB, files map[string]string) *Tree {
	t.Helper()
	tree, err := Read(bytes.NewReader(tarball(t, files)))
	require.NoError(t, err)
	return tree
}

func TestDirsListsEveryDirectoryHoldingAnEntry(t *testing.T) {
	tree := read(t, map[string]string{
		"README.md": "x", "envs/dev/main.tf": "", "envs/prod/main.tf": "", "modules/net/main.tf": "",
		"envs/stage": symlinkTo + "prod",
	})
	require.Equal(t, []string{"envs", "envs/dev", "envs/prod", "modules", "modules/net"}, tree.Dirs())
}
