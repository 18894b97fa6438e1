package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestEngineImageFlag pins the --engine-image flag's parsing.
func TestEngineImageFlag(t *testing.T) {
	f := engineImageFlag{magosv1.EngineOpenTofu: DefaultOpenTofuImage}
	require.NoError(t, f.Set("terraform=corp.example/terraform:{version}"))
	require.NoError(t, f.Set("opentofu=mirror.example:5000/tofu:{version}"))
	assert.Equal(t, "opentofu=mirror.example:5000/tofu:{version},terraform=corp.example/terraform:{version}", f.String())
	require.NoError(t, f.Set("opentofu="))
	assert.NotContains(t, f, magosv1.EngineOpenTofu)
	require.ErrorContains(t, f.Set("pulumi=x"), "ENGINE opentofu or terraform")
	require.ErrorContains(t, f.Set("terraform=bad image"), "not an image reference")
	require.ErrorContains(t, f.Set("terraform={engine}"), "not an image reference")
}
