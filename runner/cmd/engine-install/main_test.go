package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInstallCopiesTheEngineIntoTheVersionsLayout(t *testing.T) {
	src := filepath.Join(t.TempDir(), "tofu")
	require.NoError(t, os.WriteFile(src, []byte("engine bytes"), 0o755))
	versions := t.TempDir()

	var stdout, stderr bytes.Buffer
	code := run([]string{"-engine=opentofu", "-version=1.10.6", "-binary=" + src, versions}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())

	dst := filepath.Join(versions, "opentofu", "1.10.6", "tofu")
	data, err := os.ReadFile(dst)
	require.NoError(t, err)
	assert.Equal(t, "engine bytes", string(data))
	fi, err := os.Stat(dst)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o555), fi.Mode().Perm(), "executable and read-only")
	assert.Contains(t, stdout.String(), "Installed opentofu 1.10.6 at "+dst)
	entries, err := os.ReadDir(filepath.Dir(dst))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")

	code = run([]string{"-engine=opentofu", "-version=1.10.6", "-binary=" + src, versions}, &stdout, &stderr)
	assert.Equal(t, 0, code, "installing again (a restarted init container) replaces the copy: %s", stderr.String())
}

func TestInstallRefusesBadArguments(t *testing.T) {
	src := filepath.Join(t.TempDir(), "tofu")
	require.NoError(t, os.WriteFile(src, []byte("x"), 0o755))
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no versions directory", []string{"-engine=opentofu", "-version=1", "-binary=" + src}, 2, "want exactly one argument"},
		{"no engine", []string{"-version=1", "-binary=" + src, dir}, 1, "-engine is empty"},
		{"version escapes the directory", []string{"-engine=opentofu", "-version=../../x", "-binary=" + src, dir}, 1, `-version "../../x": must be a single path element`},
		{"missing binary", []string{"-engine=opentofu", "-version=1", "-binary=/nonexistent/tofu", dir}, 1, "no such file"},
		{"binary is a directory", []string{"-engine=opentofu", "-version=1", "-binary=" + dir, dir}, 1, "is not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			assert.Equal(t, tc.code, run(tc.args, &stdout, &stderr))
			assert.Contains(t, stderr.String(), tc.want)
		})
	}
}
