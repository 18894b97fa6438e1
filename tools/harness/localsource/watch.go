package localsource

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Source is what a GitRepository's artifact is made from.
type Source struct {
	// Key names the GitRepository.
	Key types.NamespacedName
	// Dir is the directory, or with Git the repository, to package.
	Dir string
	// Git packages a commit of the Git repository at Dir instead of the
	// directory's files.
	Git bool
	// Ref is the branch, tag or commit to package with Git; empty for HEAD.
	Ref string
}

// Sync publishes the source when its content differs from what this server
// last published for the GitRepository, or when the GitRepository does not
// show that artifact (it was recreated or its spec changed). It returns the
// current revision and whether it published.
func (s *Server) Sync(ctx context.Context, src Source) (revision string, published bool, err error) {
	repo, err := s.gitRepository(ctx, src.Key)
	if err != nil {
		return "", false, err
	}
	data, revision, err := s.pack(src, branchOf(repo, s.opts.Branch))
	if err != nil {
		return "", false, err
	}
	digest := s.digest(data)
	s.mu.Lock()
	last := s.published[src.Key]
	s.mu.Unlock()
	if art := repo.Status.Artifact; last == digest && art != nil && art.Digest == digest && repo.Status.ObservedGeneration == repo.Generation {
		return revision, false, nil
	}
	if _, err := s.publish(ctx, src.Key, data, revision, ""); err != nil {
		return "", false, err
	}
	return revision, true, nil
}

// Watch syncs the source now and then every interval until ctx is done,
// logging failures and carrying on.
func (s *Server) Watch(ctx context.Context, src Source, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if _, _, err := s.Sync(ctx, src); err != nil && ctx.Err() == nil {
			s.opts.Logger.Error(err, "Publishing a source", "gitRepository", src.Key, "dir", src.Dir)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pack packages a source and names its revision; branch names a
// directory's revision and a detached Git HEAD.
func (s *Server) pack(src Source, branch string) (data []byte, revision string, err error) {
	if src.Git {
		commit, revision, err := resolveGit(src.Dir, src.Ref, branch)
		if err != nil {
			return nil, "", err
		}
		a, err := readGit(src.Dir, commit)
		if err != nil {
			return nil, "", err
		}
		data, _, err := a.tarball()
		return data, revision, err
	}
	a, err := readDir(src.Dir)
	if err != nil {
		return nil, "", fmt.Errorf("packaging %s: %w", src.Dir, err)
	}
	data, sum, err := a.tarball()
	return data, branch + "@sha1:" + sum, err
}
