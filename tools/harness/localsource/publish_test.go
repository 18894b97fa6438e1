package localsource_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/magos-dev/magos/tools/harness/localsource"
)

// writeTree writes files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

func TestPublishDirectory(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	src := startServer(t, localsource.Options{})
	key := newGitRepository(t, ns, "config", "main")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"main.tf":             `output "hello" { value = "world" }`,
		"modules/net/main.tf": `locals { cidr = "10.0.0.0/8" }`,
		".git/HEAD":           "ref: refs/heads/main\n",
	})
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(dir, "link")))

	rev, err := src.Publish(ctx, key, dir)
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`^main@sha1:[0-9a-f]{40}$`), rev)

	repo := getGitRepository(t, key)
	art := repo.Status.Artifact
	require.NotNil(t, art)
	t.Run("the status reads like source-controller's", func(t *testing.T) {
		assert.Equal(t, rev, art.Revision)
		assert.Equal(t, repo.Generation, repo.Status.ObservedGeneration)
		ready := apimeta.FindStatusCondition(repo.Status.Conditions, meta.ReadyCondition)
		require.NotNil(t, ready)
		assert.Equal(t, metav1.ConditionTrue, ready.Status)
		assert.Equal(t, meta.SucceededReason, ready.Reason)
		assert.True(t, apimeta.IsStatusConditionTrue(repo.Status.Conditions, sourcev1.ArtifactInStorageCondition))
		assert.Regexp(t, `^http://127\.0\.0\.1:\d+/`+regexp.QuoteMeta(art.Path)+`$`, art.URL)
		assert.WithinDuration(t, time.Now(), art.LastUpdateTime.Time, time.Minute)
	})

	data := download(t, art.URL)
	t.Run("the artifact matches its digest and size", func(t *testing.T) {
		assert.Equal(t, digest(data), art.Digest)
		require.NotNil(t, art.Size)
		assert.Equal(t, int64(len(data)), *art.Size)
	})
	t.Run("the tarball is sorted, without .git, symlinks, owners or times", func(t *testing.T) {
		got := entries(t, data)
		var names []string
		for _, e := range got {
			names = append(names, e.Name)
			assert.Equal(t, time.Unix(0, 0).UTC(), e.ModTime.UTC(), e.Name)
			assert.Zero(t, e.Uid)
			assert.Empty(t, e.Uname)
		}
		assert.Equal(t, []string{"main.tf", "modules/", "modules/net/", "modules/net/main.tf"}, names)
		assert.Equal(t, `output "hello" { value = "world" }`, got[0].Content)
	})

	t.Run("the same content gives the same artifact", func(t *testing.T) {
		again, err := src.Publish(ctx, key, dir)
		require.NoError(t, err)
		assert.Equal(t, rev, again)
		assert.Equal(t, art.Digest, getGitRepository(t, key).Status.Artifact.Digest)
	})

	t.Run("a changed file gives a new revision and digest", func(t *testing.T) {
		writeTree(t, dir, map[string]string{"main.tf": `output "hello" { value = "there" }`})
		next, err := src.Publish(ctx, key, dir)
		require.NoError(t, err)
		assert.NotEqual(t, rev, next)
		nextArt := getGitRepository(t, key).Status.Artifact
		assert.Equal(t, next, nextArt.Revision)
		assert.NotEqual(t, art.Digest, nextArt.Digest)
		assert.Equal(t, nextArt.Digest, digest(download(t, nextArt.URL)))
		assert.Equal(t, art.Digest, digest(download(t, art.URL)), "the previous artifact is still served")
	})
}

func TestPublishUsesTheGitRepositoryBranch(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	src := startServer(t, localsource.Options{})
	key := newGitRepository(t, ns, "config", "release")
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"main.tf": "# empty\n"})

	rev, err := src.Publish(context.Background(), key, dir)
	require.NoError(t, err)
	assert.Regexp(t, `^release@sha1:`, rev)
}

func TestPublishArtifactServesBytesAsGiven(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	src := startServer(t, localsource.Options{})
	key := newGitRepository(t, ns, "hostile", "main")
	payload := []byte("not even a tarball")
	wrong := "sha256:" + "00000000000000000000000000000000000000000000000000000000000000aa"

	art, err := src.PublishArtifact(context.Background(), key, payload, localsource.ArtifactOptions{Revision: "main@sha1:abc", Digest: wrong})
	require.NoError(t, err)
	status := getGitRepository(t, key).Status.Artifact
	require.NotNil(t, status)
	assert.Equal(t, wrong, status.Digest)
	assert.Equal(t, "main@sha1:abc", status.Revision)
	assert.Equal(t, art.URL, status.URL)
	assert.Equal(t, payload, download(t, status.URL))

	art, err = src.PublishArtifact(context.Background(), key, payload, localsource.ArtifactOptions{})
	require.NoError(t, err)
	assert.Equal(t, digest(payload), art.Digest, "the digest defaults to the bytes'")
}

func TestPublishToAMissingGitRepository(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"main.tf": "# empty\n"})
	key := types.NamespacedName{Namespace: ns, Name: "absent"}

	_, err := startServer(t, localsource.Options{}).Publish(context.Background(), key, dir)
	require.Error(t, err, "fails by default")

	rev, err := startServer(t, localsource.Options{CreateMissing: true}).Publish(context.Background(), key, dir)
	require.NoError(t, err)
	assert.Equal(t, rev, getGitRepository(t, key).Status.Artifact.Revision)
}
