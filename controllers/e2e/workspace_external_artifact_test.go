package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// TestWorkspaceReadsAnExternalArtifact: a Workspace whose source is a Flux
// ExternalArtifact (what source-watcher's ArtifactGenerator and other
// producers write) waits for it with SourceNotReady, applies its artifact
// once the producer publishes it, fetched through the artifact proxy under
// the producer's storage path, and applies the next artifact the producer
// publishes.
func TestWorkspaceReadsAnExternalArtifact(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	key := types.NamespacedName{Namespace: s.ns, Name: "generated"}

	s.newWorkspace("ext", "", func(ws *magosv1.Workspace) {
		ws.Spec.SourceRef = magosv1.SourceReference{Kind: "ExternalArtifact", Name: key.Name}
	})
	s.waitWorkspace("ext", time.Minute, "waits for its ExternalArtifact", func(ws *magosv1.Workspace) bool {
		c := conditions.Get(ws, magosv1.ReadyCondition)
		return c != nil && c.Reason == magosv1.ReasonSourceNotReady && strings.Contains(c.Message, "ExternalArtifact "+key.String()+" not found")
	})

	dir := copyConfig(t, "hello")
	rev, err := s.standIn.PublishExternal(ctx, key, dir)
	require.NoError(t, err)
	ws := s.waitWorkspace("ext", 3*time.Minute, "applies the ExternalArtifact's artifact", appliedRevision(rev))
	assert.Equal(t, "ExternalArtifact", ws.Spec.SourceRef.Kind)
	assertOutput(t, s.ns, "ext-outputs", "message", "hello")

	editConfig(t, dir, `default = "hello"`, `default = "generated again"`)
	next, err := s.standIn.PublishExternal(ctx, key, dir)
	require.NoError(t, err)
	require.NotEqual(t, rev, next)
	s.waitWorkspace("ext", 3*time.Minute, "applies the producer's next artifact", appliedRevision(next))
	assertOutput(t, s.ns, "ext-outputs", "message", "generated again")
}

// assertOutput asserts that the outputs Secret holds value under name.
func assertOutput(t *testing.T, ns, secret, name, value string) {
	t.Helper()
	var sec corev1.Secret
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: secret}, &sec))
	assert.Equal(t, value, string(sec.Data[name]), "output %s in Secret %s/%s", name, ns, secret)
}
