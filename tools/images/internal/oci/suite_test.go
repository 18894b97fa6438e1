package oci_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/images/internal/oci"
)

// created is the fixed time of the test images.
var created = time.Date(2026, 11, 30, 8, 27, 41, 0, time.UTC)

// testSpec is a small image: one "binary" as entrypoint.
func testSpec() oci.Spec {
	return oci.Spec{
		Ref:        "ghcr.io/magos-dev/magos-test:0.1.0",
		Files:      []oci.Entry{{Path: "/usr/local/bin/app", Mode: 0o755, Data: []byte("a fake binary")}},
		Entrypoint: []string{"/usr/local/bin/app", "--flag"},
		Source:     "https://github.com/magos-dev/magos",
		Revision:   "0223666aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		Version:    "0.1.0",
		Created:    created,
	}
}

func build(t *testing.T, s oci.Spec) *builtImage {
	t.Helper()
	img, err := oci.Build(s)
	require.NoError(t, err)
	digest, err := img.Digest()
	require.NoError(t, err)
	return &builtImage{Image: img, digest: digest.String()}
}
