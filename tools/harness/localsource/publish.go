package localsource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/apis/artifactdigest"
)

// ArtifactOptions describe raw artifact bytes published as they are.
type ArtifactOptions struct {
	// Revision is the artifact's revision. Default: <branch>@sha1:<sha1 of
	// the bytes>.
	Revision string
	// Digest is the digest recorded in the status, which may deliberately
	// not match the bytes. Default: the bytes' digest in
	// Options.DigestAlgorithm.
	Digest string
}

// Publish packages dir (its regular files and directories, without .git)
// and makes it the GitRepository's artifact. The revision is
// <branch>@sha1:<sha1 of the packaged content>, so any change to the
// content gives a new revision; equal content gives equal bytes. The branch
// is the GitRepository's spec.ref.branch, else Options.Branch.
func (s *Server) Publish(ctx context.Context, key types.NamespacedName, dir string) (revision string, err error) {
	return s.publishSource(ctx, Source{Key: key, Dir: dir})
}

// PublishGit packages the tree of a commit of the local Git repository at
// repoDir (ref: a branch, tag or commit; empty for HEAD) and makes it the
// GitRepository's artifact, with revision <branch or tag>@sha1:<commit>.
func (s *Server) PublishGit(ctx context.Context, key types.NamespacedName, repoDir, ref string) (revision string, err error) {
	return s.publishSource(ctx, Source{Key: key, Dir: repoDir, Git: true, Ref: ref})
}

func (s *Server) publishSource(ctx context.Context, src Source) (string, error) {
	repo, err := s.gitRepository(ctx, src.Key)
	if err != nil {
		return "", err
	}
	data, revision, err := s.pack(src, branchOf(repo, s.opts.Branch))
	if err != nil {
		return "", fmt.Errorf("localsource: %w", err)
	}
	art, err := s.publish(ctx, src.Key, data, revision, "")
	if err != nil {
		return "", err
	}
	return art.Revision, nil
}

// branchOf is the branch a GitRepository follows.
func branchOf(repo *sourcev1.GitRepository, def string) string {
	if ref := repo.Spec.Reference; ref != nil && ref.Branch != "" {
		return ref.Branch
	}
	return def
}

// PublishArtifact serves data as it is as the GitRepository's artifact,
// with the revision and digest opts give: for tests that need a hostile
// artifact (path traversal, symlinks, oversize, a wrong digest).
func (s *Server) PublishArtifact(ctx context.Context, key types.NamespacedName, data []byte, opts ArtifactOptions) (*meta.Artifact, error) {
	if _, err := s.gitRepository(ctx, key); err != nil {
		return nil, err
	}
	revision := opts.Revision
	if revision == "" {
		revision = fmt.Sprintf("%s@sha1:%x", s.opts.Branch, sha1Sum(data))
	}
	return s.publish(ctx, key, data, revision, opts.Digest)
}

// publish stores data, serves it and records it in the GitRepository's
// status. An empty digest is computed from data.
func (s *Server) publish(ctx context.Context, key types.NamespacedName, data []byte, revision, digest string) (*meta.Artifact, error) {
	art, err := s.serve(sourcev1.GitRepositoryKind, key, data, revision, digest)
	if err != nil {
		return nil, err
	}
	digest = art.Digest
	if err := s.setArtifact(ctx, key, art); err != nil {
		return nil, fmt.Errorf("localsource: updating GitRepository %s: %w", key, err)
	}
	s.mu.Lock()
	s.published[key] = digest
	s.mu.Unlock()
	s.opts.Logger.Info("Published an artifact", "gitRepository", key, "revision", revision, "digest", digest, "size", len(data))
	return art, nil
}

// serve stores data and serves it at Flux's storage path of a kind's object
// (<kind>/<namespace>/<name>/<file>). An empty digest is computed from
// data.
func (s *Server) serve(kind string, key types.NamespacedName, data []byte, revision, digest string) (*meta.Artifact, error) {
	base := s.URL()
	if base == "" {
		return nil, errors.New("localsource: the server is not started")
	}
	sum := sha256.Sum256(data)
	if digest == "" {
		digest = s.digest(data)
	}
	rel := fmt.Sprintf("%s/%s/%s/%s.tar.gz", strings.ToLower(kind), key.Namespace, key.Name, hex.EncodeToString(sum[:]))
	if err := s.store(rel, data); err != nil {
		return nil, fmt.Errorf("localsource: storing the artifact: %w", err)
	}
	return &meta.Artifact{
		Path:           rel,
		URL:            base + "/" + rel,
		Revision:       revision,
		Digest:         digest,
		LastUpdateTime: metav1.Now(),
		Size:           new(int64(len(data))),
	}, nil
}

// gitRepository reads the GitRepository, creating it when it is missing
// and Options.CreateMissing is set.
func (s *Server) gitRepository(ctx context.Context, key types.NamespacedName) (*sourcev1.GitRepository, error) {
	u := newSourceObject(sourcev1.GitRepositoryKind)
	err := s.client.Get(ctx, key, u)
	if apierrors.IsNotFound(err) && s.opts.CreateMissing {
		u = newSourceObject(sourcev1.GitRepositoryKind)
		u.SetNamespace(key.Namespace)
		u.SetName(key.Name)
		u.Object["spec"] = map[string]any{
			"url":      fmt.Sprintf("%s/%s/%s.git", s.URL(), key.Namespace, key.Name),
			"interval": "1m",
			"ref":      map[string]any{"branch": s.opts.Branch},
		}
		err = s.client.Create(ctx, u)
	}
	if err != nil {
		return nil, fmt.Errorf("localsource: GitRepository %s: %w", key, err)
	}
	repo := &sourcev1.GitRepository{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, repo); err != nil {
		return nil, err
	}
	return repo, nil
}

// setArtifact records the artifact in the status as source-controller
// does: Ready and ArtifactInStorage True (reason Succeeded), the
// observedGeneration, and no Reconciling or Stalled condition.
func (s *Server) setArtifact(ctx context.Context, key types.NamespacedName, art *meta.Artifact) error {
	return updateStatus(ctx, s.client, key, sourcev1.GitRepositoryKind, func(repo *sourcev1.GitRepository) any {
		st := &repo.Status
		st.Artifact = art
		st.ObservedGeneration = repo.Generation
		msg := fmt.Sprintf("stored artifact for revision '%s'", art.Revision)
		for _, t := range []string{meta.ReadyCondition, sourcev1.ArtifactInStorageCondition} {
			apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{
				Type: t, Status: metav1.ConditionTrue, Reason: meta.SucceededReason, Message: msg, ObservedGeneration: repo.Generation,
			})
		}
		for _, t := range []string{meta.ReconcilingCondition, meta.StalledCondition, sourcev1.FetchFailedCondition, sourcev1.ArtifactOutdatedCondition} {
			apimeta.RemoveStatusCondition(&st.Conditions, t)
		}
		return st
	})
}

// updateStatus reads object key as a T, lets edit change it and return its
// status, and writes that status, retrying on conflicts. The object is
// read and written as unstructured (a Flux source kind), so any
// client can, whatever its scheme.
func updateStatus[T any](ctx context.Context, c client.Client, key types.NamespacedName, kind string, edit func(*T) any) error {
	return retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		u := newSourceObject(kind)
		if err := c.Get(ctx, key, u); err != nil {
			return err
		}
		obj := new(T)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
			return err
		}
		status, err := runtime.DefaultUnstructuredConverter.ToUnstructured(edit(obj))
		if err != nil {
			return err
		}
		u.Object["status"] = status
		return c.Status().Update(ctx, u)
	})
}

// newSourceObject is an empty source object of a Flux kind that any
// client can read, whatever its scheme.
func newSourceObject(kind string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(sourcev1.GroupVersion.WithKind(kind))
	return u
}

// digest is data's digest as source-controller writes it, in
// Options.DigestAlgorithm.
func (s *Server) digest(data []byte) string {
	return artifactdigest.Of(s.opts.DigestAlgorithm, data)
}
