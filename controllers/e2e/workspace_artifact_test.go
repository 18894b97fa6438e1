package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

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
			s.gitRepository(repo, copyConfig(t, "hello"))
			_, err := s.source.PublishArtifact(context.Background(), types.NamespacedName{Namespace: s.ns, Name: repo},
				tt.archive(t), localsource.ArtifactOptions{Revision: "main@sha1:" + repo, Digest: tt.digest})
			require.NoError(t, err)
			s.newWorkspace(repo, repo, nil)

			ws := s.waitWorkspace(repo, 2*time.Minute, "refuses the artifact", func(ws *magosv1.Workspace) bool {
				return conditions.IsTrue(ws, magosv1.StalledCondition)
			})
			assert.Equal(t, magosv1.PhaseFailed, ws.Status.Phase)
			assert.Equal(t, tt.reason, conditions.Get(ws, magosv1.StalledCondition).Reason, "message: %s", readyMessage(ws))
			assert.Nil(t, ws.Status.LastApplied, "nothing was applied")
			assert.Equal(t, 0, applyJobs(t, s.ns, repo))
		})
	}
}
