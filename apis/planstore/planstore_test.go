package planstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/apis/planstore"
)

// TestDigest: a plan digest is "sha256:" and the hex sha256 of the plan JSON.
func TestDigest(t *testing.T) {
	require.Equal(t, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", planstore.Digest(nil))
}
