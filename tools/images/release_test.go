package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/images/internal/ocitest"
)

// TestRelease inspects what `make release` wrote to $MAGOS_RELEASE_DIR
// (make test-images sets it): every image archive with an SPDX document
// naming its Go programs, both charts, kubectl-magos for this platform
// printing the release's version, the install manifests, and SHA256SUMS
// covering every file with the right digest.
func TestRelease(t *testing.T) {
	dir := os.Getenv("MAGOS_RELEASE_DIR")
	if dir == "" {
		t.Skip("MAGOS_RELEASE_DIR is not set: run `make test-images`, which makes the release first")
	}
	var umbrella chartMeta
	readYAML(t, "charts/magos/Chart.yaml", &umbrella)
	version := umbrella.AppVersion

	for _, want := range expectedImages(t) {
		archive := filepath.Join(dir, "images", want.file)
		require.FileExists(t, archive)
		doc, err := os.ReadFile(strings.TrimSuffix(archive, ".tar") + ".spdx.json")
		require.NoError(t, err, "an SBOM beside %s", want.file)
		var sbom struct {
			Name     string `json:"name"`
			Packages []struct {
				Name, PrimaryPackagePurpose string
			} `json:"packages"`
		}
		require.NoError(t, json.Unmarshal(doc, &sbom))
		assert.Equal(t, want.ref, sbom.Name)
		programs := 0
		for _, p := range sbom.Packages {
			if p.PrimaryPackagePurpose == "APPLICATION" {
				programs++
			}
		}
		assert.Positive(t, programs, "the SBOM of %s names its Go programs", want.file)
	}
	for _, chart := range []string{"magos", "magos-crds"} {
		assert.FileExists(t, filepath.Join(dir, "charts", chart+"-"+version+".tgz"))
	}
	for _, m := range []string{"crds.yaml", "magos.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, "manifests", m))
		require.NoError(t, err)
		assert.Contains(t, string(data), "magos.dev", m)
	}
	manifests, err := os.ReadFile(filepath.Join(dir, "manifests", "magos.yaml"))
	require.NoError(t, err)
	assert.Contains(t, string(manifests), "ghcr.io/magos-dev/workspace-controller:"+version)

	cli := filepath.Join(dir, "cli", "kubectl-magos_"+version+"_"+runtime.GOOS+"_"+runtime.GOARCH)
	out, err := exec.Command(cli, "version").Output()
	require.NoError(t, err)
	assert.Equal(t, "kubectl-magos "+version+"\n", string(out))
	engine := filepath.Join(dir, "cli", "magos-policy-engine_"+version+"_"+runtime.GOOS+"_"+runtime.GOARCH)
	ocitest.CheckStatic(t, engine)

	sums, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	require.NoError(t, err)
	defer sums.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(sums)
	for sc.Scan() {
		sum, file, ok := strings.Cut(sc.Text(), "  ")
		require.True(t, ok, "line %q", sc.Text())
		data, err := os.ReadFile(filepath.Join(dir, file))
		require.NoError(t, err)
		digest := sha256.Sum256(data)
		assert.Equal(t, hex.EncodeToString(digest[:]), sum, file)
		listed[filepath.Clean(file)] = true
	}
	require.NoError(t, sc.Err())
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "SHA256SUMS" {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		assert.True(t, listed[rel], "SHA256SUMS lists %s", rel)
		return nil
	}))
}
