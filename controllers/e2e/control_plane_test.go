package e2e

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/discovery"
)

// TestControlPlaneVersion checks that the suite runs against the
// Kubernetes version the Makefile says it does (`make test` the client's
// minor, `make test-compat` the next one).
func TestControlPlaneVersion(t *testing.T) {
	env.Require(t)
	want := os.Getenv("MAGOS_KUBE_VERSION")
	if want == "" {
		t.Skip("MAGOS_KUBE_VERSION is set by make test and make test-compat")
	}
	v, err := discovery.NewDiscoveryClientForConfigOrDie(env.Config).ServerVersion()
	require.NoError(t, err)
	assert.Equal(t, want, v.GitVersion)
}
