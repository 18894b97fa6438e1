package policyprotocol

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSandboxRoundTrip: what the engine reports of its sandbox reads back
// as written; only both restrictions make it complete.
func TestSandboxRoundTrip(t *testing.T) {
	for _, s := range []Sandbox{
		{Files: true, Network: true},
		{Files: true, Missing: "Landlock ABI 3 cannot restrict TCP (ABI 4, Linux 6.7)"},
		{Missing: "the policy engine cannot sandbox itself: Landlock: function not implemented"},
	} {
		var b bytes.Buffer
		require.NoError(t, WriteSandbox(&b, s))
		assert.True(t, strings.HasSuffix(b.String(), "\n"), "one line")
		assert.Equal(t, 1, strings.Count(b.String(), "\n"), "one line")
		got, err := ReadSandbox(&b)
		require.NoError(t, err)
		assert.Equal(t, s, got)
		assert.Equal(t, s.Files && s.Network, got.Complete())
	}
	_, err := ReadSandbox(strings.NewReader("policy-engine: something else\n"))
	assert.ErrorContains(t, err, "not a sandbox report")
	_, err = ReadSandbox(strings.NewReader(""))
	assert.Error(t, err)
}
