package main

import (
	"archive/tar"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/images/internal/oci"
	"github.com/magos-dev/magos/tools/images/internal/ocitest"
)

// builtImage is one archive `make images` writes, and what it must hold.
type builtImage struct {
	file       string
	ref        string
	entrypoint []string
	version    string
	// check runs the image's programs (extracted to dir) on this machine.
	check func(t *testing.T, dir string)
}

// expectedImages are the images the chart and the runner Jobs use, named
// as the chart names them: <global.image.repository>/<subchart>:<appVersion>
// for the controllers, workspace-controller.runner.image for the runner,
// and the engine of runner.defaultEngineVersion.
func expectedImages(t *testing.T) []builtImage {
	var umbrella chartMeta
	readYAML(t, "charts/magos/Chart.yaml", &umbrella)
	var values struct {
		Global struct {
			Image struct {
				Repository string `json:"repository"`
			} `json:"image"`
		} `json:"global"`
	}
	readYAML(t, "charts/magos/values.yaml", &values)
	repo := values.Global.Image.Repository
	require.Equal(t, "ghcr.io/magos-dev", repo)

	var images []builtImage
	for _, c := range []string{"workspace", "project", "rollout", "variableset", "workspaceset"} {
		var meta chartMeta
		readYAML(t, filepath.Join("charts/magos/charts", c+"-controller", "Chart.yaml"), &meta)
		img := builtImage{
			file:       meta.Name + ".tar",
			ref:        repo + "/" + meta.Name + ":" + meta.AppVersion,
			entrypoint: []string{"/usr/local/bin/" + meta.Name},
			version:    meta.AppVersion,
		}
		if c == "workspace" {
			// The policy engine the workspace-controller starts, where it
			// looks by default: next to its own binary.
			img.check = func(t *testing.T, dir string) {
				ocitest.CheckStatic(t, filepath.Join(dir, "usr/local/bin/policy-engine"))
			}
		}
		images = append(images, img)
	}
	var ws struct {
		Runner struct {
			Image                string `json:"image"`
			DefaultEngineVersion string `json:"defaultEngineVersion"`
		} `json:"runner"`
	}
	readYAML(t, "charts/magos/charts/workspace-controller/values.yaml", &ws)
	tofu := ws.Runner.DefaultEngineVersion
	return append(images,
		builtImage{
			// The chart's runner image, its placeholders as the chart fills
			// them by default.
			file: "magos-runner.tar", ref: strings.NewReplacer("{repository}", repo, "{tag}", umbrella.AppVersion).Replace(ws.Runner.Image), entrypoint: []string{"/usr/local/bin/runner"}, version: umbrella.AppVersion,
			check: func(t *testing.T, dir string) {
				assert.Equal(t, "runner "+umbrella.AppVersion+"\n", output(t, filepath.Join(dir, "usr/local/bin/runner"), "version"))
			},
		},
		builtImage{
			file: "magos-engine-opentofu-" + tofu + ".tar", ref: repo + "/magos-engine-opentofu:" + tofu, version: tofu,
			entrypoint: []string{"/engine/install", "-engine=opentofu", "-version=" + tofu, "-binary=/engine/tofu"},
			check: func(t *testing.T, dir string) {
				// What the runner Job's init container does: the entrypoint
				// with the versions directory as argument.
				versions := t.TempDir()
				output(t, filepath.Join(dir, "engine/install"), "-engine=opentofu", "-version="+tofu, "-binary="+filepath.Join(dir, "engine/tofu"), versions)
				assert.Contains(t, output(t, filepath.Join(versions, "opentofu", tofu, "tofu"), "version"), "OpenTofu v"+tofu)
			},
		},
		builtImage{
			file: "magos-pause.tar", ref: repo + "/magos-pause:" + umbrella.AppVersion, entrypoint: []string{"/pause"}, version: umbrella.AppVersion,
			check: func(t *testing.T, dir string) {
				assert.Equal(t, "pause "+umbrella.AppVersion+"\n", output(t, filepath.Join(dir, "pause"), "-v"))
			},
		},
	)
}

// TestBuiltImages inspects the archives `make images` wrote to
// $MAGOS_IMAGES_DIR (make test sets it): names as the chart uses them,
// user 65532, no shell, CA bundle, labels, entrypoint, static binaries
// that run.
func TestBuiltImages(t *testing.T) {
	dir := os.Getenv("MAGOS_IMAGES_DIR")
	if dir == "" {
		t.Skip("MAGOS_IMAGES_DIR is not set: run `make test-images`, which builds the images first")
	}
	commit := regexp.MustCompile(`^[0-9a-f]{40}$`)
	for _, want := range expectedImages(t) {
		t.Run(want.file, func(t *testing.T) {
			a, err := oci.ReadArchive(filepath.Join(dir, want.file))
			require.NoError(t, err)
			defer a.Close()
			assert.Equal(t, want.ref, a.Tag.String(), "the archive names the image the chart uses")
			ocitest.CheckImage(t, a.Image, want.entrypoint, map[string]string{
				oci.LabelSource:  "https://github.com/magos-dev/magos",
				oci.LabelVersion: want.version,
			})
			cf, err := a.Image.ConfigFile()
			require.NoError(t, err)
			assert.Regexp(t, commit, cf.Config.Labels[oci.LabelRevision], "the revision label is the commit")

			t.Run("the same inputs give the same digest", func(t *testing.T) {
				rebuilt, err := oci.Build(specOf(t, a))
				require.NoError(t, err)
				got, err := rebuilt.Digest()
				require.NoError(t, err)
				want, err := a.Image.Digest()
				require.NoError(t, err)
				assert.Equal(t, want, got)
			})

			root := t.TempDir()
			extract(t, a, root)
			bin := filepath.Join(root, want.entrypoint[0])
			ocitest.CheckStatic(t, bin)
			if want.check != nil {
				want.check(t, root)
			}
		})
	}
}

// specOf reconstructs the inputs of an archive's image: the files of its
// top layer, its entrypoint, environment, labels and creation time.
func specOf(t *testing.T, a *oci.Archive) oci.Spec {
	t.Helper()
	cf, err := a.Image.ConfigFile()
	require.NoError(t, err)
	labels := maps.Clone(cf.Config.Labels)
	s := oci.Spec{
		Ref:          a.Tag.String(),
		Entrypoint:   cf.Config.Entrypoint,
		Cmd:          cf.Config.Cmd,
		Env:          cf.Config.Env,
		Source:       labels[oci.LabelSource],
		Revision:     labels[oci.LabelRevision],
		Version:      labels[oci.LabelVersion],
		Created:      cf.Created.Time,
		Architecture: cf.Architecture,
	}
	for _, k := range []string{oci.LabelSource, oci.LabelRevision, oci.LabelVersion, oci.LabelTitle, oci.LabelCreated} {
		delete(labels, k)
	}
	if len(labels) > 0 {
		s.Labels = labels
	}
	layers, err := a.Image.Layers()
	require.NoError(t, err)
	rc, err := layers[len(layers)-1].Uncompressed()
	require.NoError(t, err)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return s
		}
		require.NoError(t, err)
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		s.Files = append(s.Files, oci.Entry{Path: "/" + h.Name, Mode: h.Mode, Data: data})
	}
}

// extract writes the regular files of the image's file system under dir.
func extract(t *testing.T, a *oci.Archive, dir string) {
	t.Helper()
	files, err := oci.Files(a.Image)
	require.NoError(t, err)
	for p, f := range files {
		if f.Header.Typeflag != '0' {
			continue
		}
		dst := filepath.Join(dir, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, f.Data, os.FileMode(f.Header.Mode).Perm()))
	}
}

// output runs bin with args and returns its stdout.
func output(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	var stderr string
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "%s %s: %s", bin, strings.Join(args, " "), stderr)
	return string(out)
}
