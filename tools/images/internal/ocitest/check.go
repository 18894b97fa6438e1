// Package ocitest holds the assertions the image tests share.
package ocitest

import (
	"crypto/x509"
	"debug/elf"
	"encoding/pem"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/images/internal/oci"
)

// CheckImage asserts what every Magos image holds: it runs as 65532 with
// a passwd and group entry, has no shell, carries a CA bundle of parsable
// certificates, the given labels and entrypoint.
func CheckImage(t *testing.T, img v1.Image, entrypoint []string, labels map[string]string) {
	t.Helper()
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	assert.Equal(t, "65532:65532", cf.Config.User)
	assert.Equal(t, entrypoint, cf.Config.Entrypoint)
	assert.Equal(t, "linux", cf.OS)
	for k, v := range labels {
		assert.Equal(t, v, cf.Config.Labels[k], "label %s", k)
	}

	files, err := oci.Files(img)
	require.NoError(t, err)
	for _, sh := range []string{"/bin/sh", "/bin/bash", "/bin/busybox", "/usr/bin/sh"} {
		assert.NotContains(t, files, sh, "the image has no shell")
	}
	assert.Contains(t, string(files["/etc/passwd"].Data), "nonroot:x:65532:65532:")
	assert.Contains(t, string(files["/etc/group"].Data), "nonroot:x:65532:")
	assert.Equal(t, 65532, files["/home/nonroot"].Header.Uid)

	bundle := files[oci.CABundlePath].Data
	n := 0
	for rest := bundle; ; n++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			assert.Empty(t, strings.TrimSpace(string(rest)), "the CA bundle is only PEM certificates")
			break
		}
		_, err := x509.ParseCertificate(block.Bytes)
		require.NoError(t, err)
	}
	assert.Greater(t, n, 100, "the CA bundle holds the NSS roots")
	pool := x509.NewCertPool()
	assert.True(t, pool.AppendCertsFromPEM(bundle))
}

// CheckStatic asserts that the executable at path needs no dynamic loader
// (the images have no libc).
func CheckStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	for _, p := range f.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "%s is dynamically linked", path)
	}
}
