package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// traversal is an archive with an entry that climbs out of the root.
func traversal(t *testing.T) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "../../escape.tf", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg}))
	_, err := tw.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

func TestRunnerReportsRunsItCannotStart(t *testing.T) {
	env.Require(t)
	bin := buildRunner(t)
	ns := env.NewNamespace(t)
	good := tarGz(t, map[string]string{"main.tf": `resource "terraform_data" "a" {}`})
	goodURL, goodDigest := serve(t, good)
	badURL, badDigest := serve(t, traversal(t))
	base := func() map[string]string {
		return map[string]string{
			"KUBECONFIG":              env.Kubeconfig,
			magosv1.EnvNamespace:      ns,
			magosv1.EnvWorkspace:      "web",
			magosv1.EnvWorkspaceUID:   "6f1e0f2c-0c1b-4f57-9a51-5f0e8c1d2a3b",
			magosv1.EnvArtifactURL:    goodURL,
			magosv1.EnvArtifactDigest: goodDigest,
			magosv1.EnvEngine:         "opentofu",
			magosv1.EnvEngineVersion:  "1.10.6",
			magosv1.EnvVersionsDir:    versionsDir(t),
			magosv1.EnvPlanID:         "plan-1",
		}
	}
	tests := []struct {
		name        string
		change      func(map[string]string)
		wantReason  string
		wantMessage string
		// wantAvailable: the message lists the installed versions.
		wantAvailable bool
	}{
		{
			name:        "artifact digest mismatch",
			change:      func(v map[string]string) { v[magosv1.EnvArtifactDigest] = sha256Digest([]byte("other")) },
			wantReason:  magosv1.ReasonArtifactDigestMismatch,
			wantMessage: "artifact digest mismatch",
		},
		{
			name: "artifact with path traversal",
			change: func(v map[string]string) {
				v[magosv1.EnvArtifactURL], v[magosv1.EnvArtifactDigest] = badURL, badDigest
			},
			wantReason:  magosv1.ReasonArtifactRejected,
			wantMessage: "artifact rejected",
		},
		{
			name:        "path not in the artifact",
			change:      func(v map[string]string) { v[magosv1.EnvPath] = "infra/missing" },
			wantReason:  magosv1.ReasonPathNotFound,
			wantMessage: `path "infra/missing" is not in the artifact`,
		},
		{
			name:          "engine version not installed",
			change:        func(v map[string]string) { v[magosv1.EnvEngineVersion] = "0.0.1" },
			wantReason:    magosv1.ReasonEngineNotFound,
			wantMessage:   "opentofu 0.0.1 is not in",
			wantAvailable: true,
		},
		{
			name:        "engine that does not run",
			change:      func(v map[string]string) { v[magosv1.EnvVersionsDir] = brokenVersionsDir(t) },
			wantReason:  magosv1.ReasonEngineNotFound,
			wantMessage: "running opentofu 1.10.6: fork/exec",
		},
		{
			name:        "missing configuration",
			change:      func(v map[string]string) { delete(v, magosv1.EnvArtifactURL) },
			wantReason:  magosv1.ReasonInvalidConfig,
			wantMessage: "MAGOS_ARTIFACT_URL is not set",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := base()
			tt.change(v)
			e := runRunner(t, bin, magosv1.RunPlan, v)
			assert.Equal(t, 1, e.code, e.output)
			assert.Equal(t, magosv1.ResultFailed, e.result.Result)
			assert.Equal(t, tt.wantReason, e.result.Reason)
			assert.Contains(t, e.result.Message, tt.wantMessage)
			if tt.wantAvailable {
				assert.Regexp(t, `available: [^)]*1\.10\.6`, e.result.Message)
			}
		})
	}
}

// brokenVersionsDir is a versions directory whose opentofu 1.10.6 is an
// executable file that is no program: the kernel refuses to start it.
func brokenVersionsDir(t *testing.T) string {
	dir := t.TempDir()
	bin := filepath.Join(dir, "opentofu", "1.10.6", "tofu")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	require.NoError(t, os.WriteFile(bin, []byte{0x7f, 'E', 'L', 'F', 0, 0, 0, 0}, 0o755))
	return dir
}
