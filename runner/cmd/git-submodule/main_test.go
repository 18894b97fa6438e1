package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHelperCommand(t *testing.T) {
	got, err := helperCommand([]string{"update", "--init", "--recursive", "--depth", "1"})
	require.NoError(t, err)
	assert.Equal(t, []string{"git", "submodule--helper", "update", "--init", "--recursive", "--depth", "1"}, got)
	got, err = helperCommand([]string{"--quiet", "update", "--init"})
	require.NoError(t, err)
	assert.Equal(t, []string{"git", "submodule--helper", "update", "--quiet", "--init"}, got)
	for _, args := range [][]string{nil, {"add", "https://example.invalid/x"}, {"foreach", "true"}} {
		_, err := helperCommand(args)
		assert.ErrorContains(t, err, "only \"update\" is available")
	}
}

// It checks out a real submodule as git's own script would: a repository
// with a submodule, cloned, then updated through this command.
func TestUpdatesASubmodule(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	git := func(wd string, args ...string) {
		t.Helper()
		c := exec.Command("git", append([]string{"-c", "protocol.file.allow=always", "-c", "user.name=t", "-c", "user.email=t@example.invalid"}, args...)...)
		c.Dir = wd
		c.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ALLOW_PROTOCOL=file")
		out, err := c.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	sub, super := filepath.Join(dir, "sub"), filepath.Join(dir, "super")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	require.NoError(t, os.MkdirAll(super, 0o755))
	git(sub, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(sub, "inner.tf"), []byte("# inner\n"), 0o644))
	git(sub, "add", ".")
	git(sub, "commit", "-qm", "sub")
	git(super, "init", "-q", "-b", "main")
	git(super, "submodule", "add", "-q", sub, "inner")
	git(super, "commit", "-qm", "super")
	clone := filepath.Join(dir, "clone")
	git(dir, "clone", "-q", super, clone)

	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_ALLOW_PROTOCOL", "file")
	t.Chdir(clone)
	require.Zero(t, run([]string{"update", "--init", "--recursive"}))
	_, err := os.Stat(filepath.Join(clone, "inner", "inner.tf"))
	require.NoError(t, err, "the submodule was checked out")
}
