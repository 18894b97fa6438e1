package statebackend

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOverrideIsNotWrittenThroughALink: an artifact that puts a link at the
// override's name (to another file of the configuration) neither gets
// that file overwritten nor keeps the link: the override is a new regular
// file.
func TestOverrideIsNotWrittenThroughALink(t *testing.T) {
	for _, hard := range []bool{false, true} {
		dir := t.TempDir()
		module := filepath.Join(dir, "main.tf")
		require.NoError(t, os.WriteFile(module, []byte("locals {}\n"), 0o600))
		link := filepath.Join(dir, OverrideFile)
		if hard {
			require.NoError(t, os.Link(module, link))
		} else {
			require.NoError(t, os.Symlink("main.tf", link))
		}
		require.NoError(t, WriteHTTPOverride(dir))
		got, err := os.ReadFile(module)
		require.NoError(t, err)
		assert.Equal(t, "locals {}\n", string(got), "the linked file is untouched (hard link %v)", hard)
		fi, err := os.Lstat(link)
		require.NoError(t, err)
		assert.True(t, fi.Mode().IsRegular(), "the override is a regular file of its own")
		override, err := os.ReadFile(link)
		require.NoError(t, err)
		assert.Equal(t, httpBackendBlock, string(override))
	}
}
