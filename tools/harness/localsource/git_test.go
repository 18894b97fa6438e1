package localsource_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/harness/localsource"
)

// gitRepo makes a Git repository with one commit on main and returns its
// directory and a function running git in it.
func gitRepo(t *testing.T) (string, func(args ...string) string) {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	writeTree(t, dir, map[string]string{"main.tf": "# v1\n", "uncommitted.tf": ""})
	run("add", "main.tf")
	run("commit", "-q", "-m", "v1")
	return dir, run
}

func TestPublishGit(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	src := startServer(t, localsource.Options{})
	key := newGitRepository(t, ns, "config", "main")
	dir, git := gitRepo(t)
	first := git("rev-parse", "HEAD")

	rev, err := src.PublishGit(ctx, key, dir, "")
	require.NoError(t, err)
	assert.Equal(t, "main@sha1:"+first, rev)
	art := getGitRepository(t, key).Status.Artifact
	data := download(t, art.URL)
	assert.Equal(t, art.Digest, digest(data))
	got := entries(t, data)
	require.Len(t, got, 1, "only the committed tree")
	assert.Equal(t, "main.tf", got[0].Name)
	assert.Equal(t, "# v1\n", got[0].Content)

	writeTree(t, dir, map[string]string{"main.tf": "# v2\n"})
	git("commit", "-q", "-am", "v2")
	second := git("rev-parse", "HEAD")
	rev, err = src.PublishGit(ctx, key, dir, "")
	require.NoError(t, err)
	assert.Equal(t, "main@sha1:"+second, rev)

	rev, err = src.PublishGit(ctx, key, dir, first)
	require.NoError(t, err)
	assert.Equal(t, "sha1:"+first, rev, "a bare commit has no branch")
	git("tag", "v1.0.0", first)
	rev, err = src.PublishGit(ctx, key, dir, "v1.0.0")
	require.NoError(t, err)
	assert.Equal(t, "v1.0.0@sha1:"+first, rev)
}
