package policyengine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLandlockSandboxByABI: what the sandbox takes from the engine on each
// Landlock ABI the kernel may offer: files from ABI 1 (Linux 5.13), TCP
// from ABI 4 (Linux 6.7); what is missing is said.
func TestLandlockSandboxByABI(t *testing.T) {
	tests := []struct {
		abi            int
		files, network bool
		missing        string
	}{
		{0, false, false, "no Landlock"},
		{1, true, false, "Landlock ABI 1 cannot restrict TCP"},
		{3, true, false, "Landlock ABI 3 cannot restrict TCP"},
		{4, true, true, ""},
		{7, true, true, ""},
	}
	for _, tt := range tests {
		s := landlockSandbox(tt.abi)
		assert.Equal(t, tt.files, s.Files, "ABI %d: files", tt.abi)
		assert.Equal(t, tt.network, s.Network, "ABI %d: network", tt.abi)
		if tt.missing == "" {
			assert.Empty(t, s.Missing, "ABI %d", tt.abi)
			assert.True(t, s.Complete())
		} else {
			assert.Contains(t, s.Missing, tt.missing, "ABI %d", tt.abi)
			assert.False(t, s.Complete())
		}
	}
}
