package localsource_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/harness/localsource"
)

func TestSyncPublishesOnlyChanges(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	srv := startServer(t, localsource.Options{})
	key := newGitRepository(t, ns, "config", "main")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"main.tf": "# v1\n"})
	src := localsource.Source{Key: key, Dir: dir}

	rev, published, err := srv.Sync(ctx, src)
	require.NoError(t, err)
	assert.True(t, published)
	_, published, err = srv.Sync(ctx, src)
	require.NoError(t, err)
	assert.False(t, published, "nothing changed")

	writeTree(t, dir, map[string]string{"main.tf": "# v2\n"})
	next, published, err := srv.Sync(ctx, src)
	require.NoError(t, err)
	assert.True(t, published)
	assert.NotEqual(t, rev, next)
}

func TestWatchRepublishesOnChange(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	srv := startServer(t, localsource.Options{})
	key := newGitRepository(t, ns, "config", "main")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"main.tf": "# v1\n"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Watch(ctx, localsource.Source{Key: key, Dir: dir}, 100*time.Millisecond)
	}()
	t.Cleanup(func() { cancel(); <-done })

	var first string
	require.Eventually(t, func() bool {
		art := getGitRepository(t, key).Status.Artifact
		if art != nil {
			first = art.Revision
		}
		return art != nil
	}, timeout, 50*time.Millisecond)
	writeTree(t, dir, map[string]string{"main.tf": "# v2\n"})
	require.Eventually(t, func() bool {
		art := getGitRepository(t, key).Status.Artifact
		return art.Revision != first
	}, timeout, 50*time.Millisecond)
}
