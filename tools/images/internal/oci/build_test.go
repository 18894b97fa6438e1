package oci_test

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/images/internal/oci"
)

type builtImage struct {
	v1.Image
	digest string
}

func TestBuildIsReproducible(t *testing.T) {
	first, second := build(t, testSpec()), build(t, testSpec())
	assert.Equal(t, first.digest, second.digest, "the same inputs give the same digest")

	dir := t.TempDir()
	tag, err := testSpec().Tag()
	require.NoError(t, err)
	sums := make([][32]byte, 2)
	for i, img := range []*builtImage{first, second} {
		file := filepath.Join(dir, "img.tar")
		require.NoError(t, oci.WriteArchive(file, tag, img, created))
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		sums[i] = sha256.Sum256(data)
	}
	assert.Equal(t, sums[0], sums[1], "the same image gives the same archive bytes")

	t.Run("the order of the files does not matter", func(t *testing.T) {
		s := testSpec()
		s.Files = append([]oci.Entry{{Path: "/etc/app.conf", Data: []byte("x")}}, s.Files...)
		r := testSpec()
		r.Files = append(r.Files, oci.Entry{Path: "/etc/app.conf", Data: []byte("x")})
		assert.Equal(t, build(t, s).digest, build(t, r).digest)
	})

	for _, change := range []struct {
		name   string
		mutate func(*oci.Spec)
	}{
		{"revision", func(s *oci.Spec) { s.Revision = "ffffffffffffffffffffffffffffffffffffffff" }},
		{"file content", func(s *oci.Spec) { s.Files[0].Data = []byte("other") }},
		{"created", func(s *oci.Spec) { s.Created = s.Created.Add(time.Second) }},
	} {
		t.Run("a different "+change.name+" gives a different digest", func(t *testing.T) {
			s := testSpec()
			change.mutate(&s)
			assert.NotEqual(t, first.digest, build(t, s).digest)
		})
	}
}

func TestBuildRefusesBadSpecs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*oci.Spec)
		want   string
	}{
		{"no tag", func(s *oci.Spec) { s.Ref = "ghcr.io/magos-dev/magos-test" }, `image reference "ghcr.io/magos-dev/magos-test"`},
		{"no entrypoint", func(s *oci.Spec) { s.Entrypoint = nil }, "no entrypoint"},
		{"entrypoint not in the image", func(s *oci.Spec) { s.Entrypoint = []string{"/bin/sh"} }, "the entrypoint /bin/sh is not one of the image's files"},
		{"no revision", func(s *oci.Spec) { s.Revision = "" }, "the revision label is empty"},
		{"no source", func(s *oci.Spec) { s.Source = "" }, "the source label is empty"},
		{"overridden OCI label", func(s *oci.Spec) { s.Labels = map[string]string{oci.LabelVersion: "x"} }, "label org.opencontainers.image.version is set from the spec's own fields"},
		{"dynamically linked binary", func(s *oci.Spec) { s.Files[0].Data = dynamicELF(t) }, "/usr/local/bin/app is dynamically linked"},
		{"dynamically linked binary without its libraries", func(s *oci.Spec) {
			s.Files[0].Data = dynamicELF(t)
			s.Files = append(s.Files, oci.Entry{Path: "/lib64/ld-linux-x86-64.so.2", Data: []byte("loader"), Mode: 0o755})
		}, "/usr/local/bin/app needs libc.so.6, which the image does not hold"},
		{"relative file path", func(s *oci.Spec) { s.Files = append(s.Files, oci.Entry{Path: "etc/x"}) }, `layer entry "etc/x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := testSpec()
			tc.mutate(&s)
			_, err := oci.Build(s)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// A dynamically linked binary starts in an image that holds its loader and
// libraries (the runner image's git and ssh).
func TestBuildTakesDynamicBinariesWithTheirLibraries(t *testing.T) {
	s := testSpec()
	s.Files[0].Data = dynamicELF(t)
	s.Files = append(s.Files,
		oci.Entry{Path: "/lib64/ld-linux-x86-64.so.2", Data: []byte("loader"), Mode: 0o755},
		oci.Entry{Path: "/lib/x86_64-linux-gnu/libc.so.6", Data: []byte("libc"), Mode: 0o755})
	_, err := oci.Build(s)
	require.NoError(t, err)
}

// dynamicELF returns a dynamically linked executable of the build machine.
func dynamicELF(t *testing.T) []byte {
	t.Helper()
	for _, p := range []string{"/bin/true", "/usr/bin/true", "/bin/ls"} {
		if data, err := os.ReadFile(p); err == nil {
			return data
		}
	}
	t.Fatal("no dynamically linked executable found on this machine")
	return nil
}
