package oci_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/images/internal/oci"
)

// TestSBOMListsTheGoModulesOfEachBinary: the SPDX document names the image,
// each Go program in it (not other files) and the modules it was built
// from, as its build information records them, and is the same on every
// run.
func TestSBOMListsTheGoModulesOfEachBinary(t *testing.T) {
	// magos-image itself: a Go program built with go-containerregistry.
	bin := filepath.Join(t.TempDir(), "magos-image")
	gobuild := exec.Command("go", "build", "-o", bin, "../..")
	gobuild.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	out, err := gobuild.CombinedOutput()
	require.NoError(t, err, "%s", out)
	program, err := os.ReadFile(bin)
	require.NoError(t, err)
	s := testSpec()
	s.Files[0].Data = program
	s.Files = append(s.Files, oci.Entry{Path: "/etc/motd", Data: []byte("not a program"), Mode: 0o644})
	img := build(t, s)

	doc, err := oci.SBOM(s.Ref, img.Image)
	require.NoError(t, err)
	again, err := oci.SBOM(s.Ref, img.Image)
	require.NoError(t, err)
	assert.Equal(t, string(doc), string(again), "reproducible")

	var got struct {
		SPDXVersion  string `json:"spdxVersion"`
		CreationInfo struct {
			Created string `json:"created"`
		} `json:"creationInfo"`
		Packages []struct {
			SPDXID, Name, VersionInfo, PrimaryPackagePurpose string
		} `json:"packages"`
		Relationships []struct {
			Element string `json:"spdxElementId"`
			Type    string `json:"relationshipType"`
			Related string `json:"relatedSpdxElement"`
		} `json:"relationships"`
	}
	require.NoError(t, json.Unmarshal(doc, &got))
	assert.Equal(t, "SPDX-2.3", got.SPDXVersion)
	assert.Equal(t, "2026-11-30T08:27:41Z", got.CreationInfo.Created, "the image's creation time")
	byPurpose := map[string][]string{}
	for _, p := range got.Packages {
		byPurpose[p.PrimaryPackagePurpose] = append(byPurpose[p.PrimaryPackagePurpose], p.Name)
	}
	assert.Equal(t, []string{s.Ref}, byPurpose["CONTAINER"])
	assert.Equal(t, []string{"/usr/local/bin/app"}, byPurpose["APPLICATION"], "Go programs only")
	assert.Contains(t, byPurpose["LIBRARY"], "github.com/google/go-containerregistry")
	assert.Contains(t, byPurpose["LIBRARY"], "stdlib")
	assert.Contains(t, got.Relationships, struct {
		Element string `json:"spdxElementId"`
		Type    string `json:"relationshipType"`
		Related string `json:"relatedSpdxElement"`
	}{"SPDXRef-Image", "CONTAINS", "SPDXRef-Binary-0"})
}
