package main

import (
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/images/internal/oci"
)

// TestPushImagesAndCharts pushes an image archive and both charts, as
// `make push` does, to a registry served on loopback, and pulls them back.
func TestPushImagesAndCharts(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "app")
	require.NoError(t, os.WriteFile(bin, []byte("a fake binary"), 0o755))
	archive := filepath.Join(dir, "magos-test.tar")
	magosImage(t, "build", "-ref", "ghcr.io/magos-dev/magos-test:0.1.0", "-out", archive,
		"-file", bin+"=/usr/local/bin/app", "-entrypoint", "/usr/local/bin/app",
		"-source", "https://github.com/magos-dev/magos", "-revision", "0223666d66a74ead9f6f6bf1233b597a08fce990", "-version", "0.1.0")
	a, err := oci.ReadArchive(archive)
	require.NoError(t, err)
	defer a.Close()
	built, err := a.Image.Digest()
	require.NoError(t, err)

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	prefix := host + "/magos"

	out := magosImage(t, "push", "-registry", prefix, "-plain-http", "-helm", helmBinary(t),
		"-chart", filepath.Join(root, "charts", "magos-crds"), "-chart", filepath.Join(root, "charts", "magos"), archive)

	t.Run("the image keeps its digest under the registry's prefix", func(t *testing.T) {
		ref, err := name.NewTag(prefix+"/magos-test:0.1.0", name.Insecure)
		require.NoError(t, err)
		img, err := remote.Image(ref)
		require.NoError(t, err)
		pulled, err := img.Digest()
		require.NoError(t, err)
		assert.Equal(t, built, pulled)
		assert.Contains(t, out, ref.String()+"@"+built.String())
		wantLayers, err := a.Image.Layers()
		require.NoError(t, err)
		gotLayers, err := img.Layers()
		require.NoError(t, err)
		require.Len(t, gotLayers, len(wantLayers))
		for i := range wantLayers {
			want, _ := wantLayers[i].Digest()
			got, _ := gotLayers[i].Digest()
			assert.Equal(t, want, got)
		}
	})

	for _, chart := range []string{"magos-crds", "magos"} {
		t.Run("the chart "+chart+" is an OCI artifact helm installs from", func(t *testing.T) {
			var meta chartMeta
			readYAML(t, filepath.Join("charts", chart, "Chart.yaml"), &meta)
			ref, err := name.NewTag(prefix+"/charts/"+chart+":"+meta.Version, name.Insecure)
			require.NoError(t, err)
			desc, err := remote.Get(ref)
			require.NoError(t, err)
			assert.Contains(t, out, ref.String()+"@"+desc.Digest.String(), "the digest make push reports is the registry's")
			img, err := desc.Image()
			require.NoError(t, err)
			m, err := img.Manifest()
			require.NoError(t, err)
			assert.Equal(t, "application/vnd.cncf.helm.config.v1+json", string(m.Config.MediaType))

			pull := t.TempDir()
			cmd := exec.Command(helmBinary(t), "pull", "oci://"+prefix+"/charts/"+chart, "--version", meta.Version, "--plain-http", "--destination", pull)
			b, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", b)
			shown, err := exec.Command(helmBinary(t), "show", "chart", filepath.Join(pull, chart+"-"+meta.Version+".tgz")).CombinedOutput()
			require.NoError(t, err, "%s", shown)
			assert.Contains(t, string(shown), "name: "+chart)
			assert.Contains(t, string(shown), "appVersion: "+meta.AppVersion)
		})
	}
}

func TestPushRefusesBadArguments(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.tar")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no registry", []string{"push", missing}, "need -registry host[/prefix]"},
		{"chart without helm", []string{"push", "-registry", "127.0.0.1:1/x", "-chart", "charts/magos"}, "-chart needs -helm"},
		{"missing archive", []string{"push", "-registry", "127.0.0.1:1/x", missing}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			assert.Equal(t, 1, run(t.Context(), tc.args, &stdout, &stderr))
			assert.Contains(t, stderr.String(), tc.want)
		})
	}
}
