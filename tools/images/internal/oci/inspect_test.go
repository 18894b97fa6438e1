package oci_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/images/internal/oci"
	"github.com/magos-dev/magos/tools/images/internal/ocitest"
)

func TestImageRunsAsNonRootWithoutShell(t *testing.T) {
	img := build(t, testSpec())
	ocitest.CheckImage(t, img, testSpec().Entrypoint, map[string]string{
		oci.LabelSource:   "https://github.com/magos-dev/magos",
		oci.LabelRevision: "0223666aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		oci.LabelVersion:  "0.1.0",
		oci.LabelTitle:    "magos-test",
		oci.LabelCreated:  "2026-11-30T08:27:41Z",
	})

	files, err := oci.Files(img)
	require.NoError(t, err)
	app := files["/usr/local/bin/app"]
	require.NotNil(t, app.Header)
	assert.Equal(t, int64(0o755), app.Header.Mode, "binaries are executable")
	assert.True(t, created.Equal(app.Header.ModTime), "every file has the fixed time, not %s", app.Header.ModTime)
	assert.Equal(t, int64(0o1777), files["/tmp"].Header.Mode)
}
