package oci_test

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/images/internal/oci"
)

// tarEntries reads the names and contents of a tar file.
func tarEntries(t *testing.T, file string) (names []string, data map[string][]byte) {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	data = map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, data
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		names = append(names, h.Name)
		data[h.Name] = b
	}
}

func TestArchiveIsAnOCILayoutContainerdImports(t *testing.T) {
	img := build(t, testSpec())
	tag, err := testSpec().Tag()
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "magos-test.tar")
	require.NoError(t, oci.WriteArchive(file, tag, img, created))

	names, data := tarEntries(t, file)
	assert.Equal(t, []string{"oci-layout", "index.json"}, names[:2])
	assert.JSONEq(t, `{"imageLayoutVersion":"1.0.0"}`, string(data["oci-layout"]))
	var index v1.IndexManifest
	require.NoError(t, json.Unmarshal(data["index.json"], &index))
	require.Len(t, index.Manifests, 1)
	desc := index.Manifests[0]
	assert.Equal(t, img.digest, desc.Digest.String())
	assert.Equal(t, "application/vnd.oci.image.manifest.v1+json", string(desc.MediaType))
	assert.Equal(t, map[string]string{
		"io.containerd.image.name":          "ghcr.io/magos-dev/magos-test:0.1.0",
		"org.opencontainers.image.ref.name": "0.1.0",
	}, desc.Annotations)

	layers, err := img.Layers()
	require.NoError(t, err)
	assert.Len(t, names, 2+2+len(layers), "layout files, manifest, config and every layer")
	for _, l := range layers {
		mt, err := l.MediaType()
		require.NoError(t, err)
		assert.Equal(t, "application/vnd.oci.image.layer.v1.tar+gzip", string(mt))
	}

	a, err := oci.ReadArchive(file)
	require.NoError(t, err)
	defer a.Close()
	assert.Equal(t, tag, a.Tag)
	digest, err := a.Image.Digest()
	require.NoError(t, err)
	assert.Equal(t, img.digest, digest.String(), "reading the archive back gives the same image")
}

func TestReadArchiveRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "evil.tar")
	f, err := os.Create(file)
	require.NoError(t, err)
	tw := tar.NewWriter(f)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "../escape", Typeflag: tar.TypeReg, Mode: 0o644}))
	require.NoError(t, tw.Close())
	require.NoError(t, f.Close())

	_, err = oci.ReadArchive(file)
	require.ErrorIs(t, err, oci.ErrInvalidArchive)
	assert.Contains(t, err.Error(), `unexpected entry "../escape"`)
	assert.NoFileExists(t, filepath.Join(filepath.Dir(dir), "escape"))
}
