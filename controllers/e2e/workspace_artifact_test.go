package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"strings"
	"testing"
	"time"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/magos-dev/magos/apis/artifactdigest"
	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/tools/harness/localsource"
)

// tarball builds a tar.gz from headers; regular files get body bytes of
// their declared size (zeros, which gzip shrinks to almost nothing).
func tarball(t *testing.T, headers ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	require.NoError(t, err)
	tw := tar.NewWriter(zw)
	zeros := make([]byte, 1<<20)
	for _, h := range headers {
		require.NoError(t, tw.WriteHeader(h))
		for left := h.Size; left > 0; {
			n := min(left, int64(len(zeros)))
			_, err := tw.Write(zeros[:n])
			require.NoError(t, err)
			left -= n
		}
	}
	require.NoError(t, tw.Close())
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestMaliciousArtifactIsRefused(t *testing.T) {
	env.Require(t)
	mainTF := &tar.Header{Name: "main.tf", Mode: 0o644, Typeflag: tar.TypeReg, Size: 0}
	tests := []struct {
		name    string
		archive func(t *testing.T) []byte
		digest  string // "" = the real digest of the bytes
		reason  string
	}{
		{name: "path traversal", reason: magosv1.ReasonArtifactRejected, archive: func(t *testing.T) []byte {
			return tarball(t, mainTF, &tar.Header{Name: "../../escaped.tf", Mode: 0o644, Typeflag: tar.TypeReg, Size: 1})
		}},
		{name: "symlink escaping the root", reason: magosv1.ReasonArtifactRejected, archive: func(t *testing.T) []byte {
			return tarball(t, mainTF, &tar.Header{Name: "passwd", Linkname: "../../../../etc/passwd", Mode: 0o777, Typeflag: tar.TypeSymlink})
		}},
		{name: "oversize file", reason: magosv1.ReasonArtifactRejected, archive: func(t *testing.T) []byte {
			return tarball(t, mainTF, &tar.Header{Name: "huge.bin", Mode: 0o644, Typeflag: tar.TypeReg, Size: 1<<30 + 1})
		}},
		{name: "digest mismatch", reason: magosv1.ReasonArtifactDigestMismatch, digest: "sha256:" + string(bytes.Repeat([]byte("0"), 64)),
			archive: func(t *testing.T) []byte { return tarball(t, mainTF) }},
	}
	s := newStack(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := []string{"evil-a", "evil-b", "evil-c", "evil-d"}[i]
			s.standInRepository(repo)
			_, err := s.standIn.PublishArtifact(context.Background(), types.NamespacedName{Namespace: s.ns, Name: repo},
				tt.archive(t), localsource.ArtifactOptions{Revision: "main@sha1:" + repo, Digest: tt.digest})
			require.NoError(t, err)
			s.newWorkspace(repo, repo, nil)

			ws := s.waitWorkspace(repo, 2*time.Minute, "refuses the artifact", func(ws *magosv1.Workspace) bool {
				return conditions.IsTrue(ws, magosv1.StalledCondition)
			})
			assert.Equal(t, magosv1.PhaseFailed, ws.Status.Phase)
			assert.Equal(t, tt.reason, conditions.Get(ws, magosv1.StalledCondition).Reason, "message: %s", readyMessage(ws))
			assert.Nil(t, ws.Status.LastApplied, "nothing was applied")
			assert.Equal(t, 0, countJobs(t, s.ns, repo, magosv1.RunApply))
			assert.Equal(t, tt.reason, ws.Status.History[0].Reason, "the run stopped at the artifact")
		})
	}
}

// TestArtifactDigestAlgorithms: source-controller writes artifact digests
// in the algorithm of its --artifact-digest-algo (sha256, sha384, sha512
// or blake3). Runs fetch and check artifacts in each, through the
// artifact proxy, and a digest in any of them that the bytes do not have
// stops the run.
func TestArtifactDigestAlgorithms(t *testing.T) {
	env.Require(t)
	for _, algo := range []string{"sha384", "sha512", "blake3"} {
		t.Run(algo, func(t *testing.T) {
			s := newStackWith(t, stackOptions{DigestAlgorithm: algo})
			rev := s.gitRepository("infra", copyConfig(t, "hello"))
			var repo sourcev1.GitRepository
			require.NoError(t, env.Client.Get(context.Background(), types.NamespacedName{Namespace: s.ns, Name: "infra"}, &repo))
			require.NotNil(t, repo.Status.Artifact)
			require.True(t, strings.HasPrefix(repo.Status.Artifact.Digest, algo+":"), "published as %s", repo.Status.Artifact.Digest)
			s.newWorkspace("hello", "infra", nil)
			s.waitWorkspace("hello", 3*time.Minute, "applies an artifact with a "+algo+" digest", appliedRevision(rev))

			s.standInRepository("forged")
			wrong, err := artifactdigest.Parse(artifactdigest.Of(algo, []byte("other bytes")))
			require.NoError(t, err)
			_, err = s.standIn.PublishArtifact(context.Background(), types.NamespacedName{Namespace: s.ns, Name: "forged"},
				tarball(t, &tar.Header{Name: "main.tf", Mode: 0o644, Typeflag: tar.TypeReg}), localsource.ArtifactOptions{Revision: "main@sha1:forged", Digest: wrong.String()})
			require.NoError(t, err)
			s.newWorkspace("forged", "forged", nil)
			ws := s.waitWorkspace("forged", 2*time.Minute, "refuses the artifact", func(ws *magosv1.Workspace) bool {
				return conditions.IsTrue(ws, magosv1.StalledCondition)
			})
			assert.Equal(t, magosv1.ReasonArtifactDigestMismatch, conditions.Get(ws, magosv1.StalledCondition).Reason, "message: %s", readyMessage(ws))
			assert.Nil(t, ws.Status.LastApplied, "nothing was applied")
			assert.Equal(t, 0, countJobs(t, s.ns, "forged", magosv1.RunApply))
		})
	}
}
