package e2e

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/kstatustest"
)

// TestNewObjectsAreInProgress: an object of each Magos kind that no
// controller has reconciled yet reads, from the apiserver, with
// status.observedGeneration -1 (the CRDs' default), so kstatus calls it
// InProgress: a Flux Kustomization with wait, `kubectl wait` on
// observedGeneration, or Argo CD never takes a Workspace that was just
// applied for one that is done.
func TestNewObjectsAreInProgress(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	meta := metav1.ObjectMeta{Name: "new", Namespace: ns}
	objs := []client.Object{
		&magosv1.Workspace{ObjectMeta: meta, Spec: magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"}}},
		&magosv1.Project{ObjectMeta: meta},
		&magosv1.VariableSet{ObjectMeta: meta},
		&magosv1.Rollout{ObjectMeta: meta, Spec: magosv1.RolloutSpec{ProjectRef: magosv1.LocalObjectReference{Name: "p"}, Stages: []magosv1.Stage{{Name: "dev"}}}},
	}
	for _, o := range objs {
		require.NoError(t, env.Client.Create(ctx, o), "%T", o)
		require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(o), o))
		got := kstatustest.Compute(t, o)
		assert.Equal(t, status.InProgressStatus, got.Status, "%T: %s", o, got.Message)
		assert.True(t, got.Standard, "%T: decided by observedGeneration", o)
	}
}
