package engine

import (
	"archive/zip"
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// planWith builds a saved-plan zip holding files.
func planWith(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

const emptyLock = "# This file is maintained automatically by \"tofu init\".\n# Manual edits may be lost in future updates.\n"

const providerLock = emptyLock + `
provider "registry.opentofu.org/magos/magostest" {
  version = "0.1.0"
  hashes = [
    "h1:abc=",
  ]
}
`

func TestPlanNeedsProviders(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  bool
	}{
		{name: "built-in providers only", files: map[string]string{"tfplan": "x", "tfconfig/m-/main.tf": "", planLockFile: emptyLock}, want: false},
		{name: "an installed provider", files: map[string]string{"tfplan": "x", planLockFile: providerLock}, want: true},
		{name: "no lock file", files: map[string]string{"tfplan": "x"}, want: true},
		{name: "a lock file in a module is not the plan's", files: map[string]string{"tfconfig/m-/" + planLockFile: providerLock, planLockFile: emptyLock}, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PlanNeedsProviders(planWith(t, tc.files))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestPlanNeedsProvidersRefusesWhatIsNotAPlan(t *testing.T) {
	_, err := PlanNeedsProviders([]byte("not a zip"))
	assert.ErrorContains(t, err, "reading the saved plan")
}
