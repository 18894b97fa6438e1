package sourcecontroller

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// requestedAtAnnotation asks a Flux object for a reconcile, as `flux
// reconcile` and Flux's webhook receivers do.
const requestedAtAnnotation = "reconcile.fluxcd.io/requestedAt"

// Publish commits the files of dir as the new content of branch main of
// the GitRepository key's repository, makes the GitRepository follow it
// (creating it with this instance's shard, or asking it for a reconcile)
// and waits for source-controller's artifact of the commit. It returns the
// artifact's revision, main@sha1:<commit>. Every publish is a new commit,
// so equal content gives a new revision, as a push to Git does.
func (c *Controller) Publish(ctx context.Context, cl client.Client, key types.NamespacedName, dir string) (string, error) {
	c.mu.Lock()
	commit, err := c.git.Publish(key.Namespace+"/"+key.Name, dir)
	c.mu.Unlock()
	if err != nil {
		return "", err
	}
	rev := "main@sha1:" + commit
	repo := newGitRepository(key)
	switch err := cl.Get(ctx, key, repo); {
	case apierrors.IsNotFound(err):
		if err := unstructured.SetNestedField(repo.Object, map[string]any{
			"url":      c.RepositoryURL(key),
			"ref":      map[string]any{"branch": "main"},
			"interval": "10m",
			"timeout":  "30s",
		}, "spec"); err != nil {
			return "", err
		}
		if c.opts.Shard != "" {
			repo.SetLabels(map[string]string{ShardLabel: c.opts.Shard})
		}
		if err := cl.Create(ctx, repo); err != nil {
			return "", fmt.Errorf("creating GitRepository %s: %w", key, err)
		}
	case err == nil:
		patch := client.MergeFrom(repo.DeepCopy())
		annotations := repo.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[requestedAtAnnotation] = time.Now().Format(time.RFC3339Nano)
		repo.SetAnnotations(annotations)
		if err := cl.Patch(ctx, repo, patch); err != nil {
			return "", fmt.Errorf("requesting a reconcile of GitRepository %s: %w", key, err)
		}
	default:
		return "", err
	}
	return rev, c.awaitArtifact(ctx, cl, key, rev, 2*time.Minute)
}

// RepositoryURL is where the Git server serves the repository of
// GitRepository key.
func (c *Controller) RepositoryURL(key types.NamespacedName) string {
	return c.gitURL + "/" + key.Namespace + "/" + key.Name + ".git"
}

// awaitArtifact waits until the GitRepository's artifact is rev and it is
// Ready for its current spec.
func (c *Controller) awaitArtifact(ctx context.Context, cl client.Client, key types.NamespacedName, rev string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	repo := newGitRepository(key)
	for {
		err := cl.Get(ctx, key, repo)
		if err == nil && HasArtifact(repo, rev) {
			return nil
		}
		select {
		case <-ctx.Done():
			status, _, _ := unstructured.NestedMap(repo.Object, "status")
			return fmt.Errorf("source-controller made no artifact of %s for GitRepository %s: %w (status %v)", rev, key, ctx.Err(), status)
		case <-c.exited:
			return fmt.Errorf("source-controller exited: %v: %s", c.cmd.ProcessState, c.logTail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// HasArtifact tells whether a Flux source's artifact is rev and the
// source is Ready for its current generation.
func HasArtifact(repo *unstructured.Unstructured, rev string) bool {
	if got, _, _ := unstructured.NestedString(repo.Object, "status", "artifact", "revision"); got != rev {
		return false
	}
	if observed, _, _ := unstructured.NestedInt64(repo.Object, "status", "observedGeneration"); observed != repo.GetGeneration() {
		return false
	}
	conditions, _, _ := unstructured.NestedSlice(repo.Object, "status", "conditions")
	for _, cond := range conditions {
		if cond, ok := cond.(map[string]any); ok && cond["type"] == "Ready" {
			return cond["status"] == "True"
		}
	}
	return false
}

func newGitRepository(key types.NamespacedName) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("source.toolkit.fluxcd.io/v1")
	u.SetKind("GitRepository")
	u.SetNamespace(key.Namespace)
	u.SetName(key.Name)
	return u
}
