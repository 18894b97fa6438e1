package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// stateResources counts the resources in a Workspace's state Secret.
func stateResources(t *testing.T, ns, name string) int {
	t.Helper()
	var secret corev1.Secret
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: magosv1.StateSecretName(name)}, &secret))
	zr, err := gzip.NewReader(bytes.NewReader(secret.Data[magosv1.StateKey]))
	require.NoError(t, err)
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	var state struct {
		Resources []json.RawMessage `json:"resources"`
	}
	require.NoError(t, json.Unmarshal(raw, &state))
	return len(state.Resources)
}

func TestWorkspaceDestroyOnDelete(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	ws := s.newWorkspace("doomed", "infra", func(ws *magosv1.Workspace) { ws.Spec.DestroyOnDelete = true })
	s.waitWorkspace("doomed", 3*time.Minute, "applies", appliedRevision(rev))
	require.Equal(t, 2, stateResources(t, s.ns, "doomed"))

	require.NoError(t, env.Client.Delete(ctx, ws))
	require.Eventually(t, func() bool {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(ws), &magosv1.Workspace{})
		return apierrors.IsNotFound(err)
	}, 3*time.Minute, 250*time.Millisecond, "the Workspace goes after its destroy run")
	// There is no garbage collector here: the Jobs stay to be counted.
	assert.Len(t, destroyRunJobs(t, s.ns, "doomed", magosv1.RunPlan), 1, "a destroy plan was made")
	assert.Len(t, destroyRunJobs(t, s.ns, "doomed", magosv1.RunApply), 1, "and applied")
	assert.Zero(t, countJobs(t, s.ns, "doomed", magosv1.RunDestroy), "no destroy without a plan ran")
	assert.Equal(t, 0, stateResources(t, s.ns, "doomed"), "the destroy emptied the state")
}

func TestWorkspaceDeletionDoesNotHangWithoutSource(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	ws := s.newWorkspace("orphan", "infra", func(ws *magosv1.Workspace) { ws.Spec.DestroyOnDelete = true })
	s.waitWorkspace("orphan", 3*time.Minute, "applies", appliedRevision(rev))

	repo := newSourceObject("infra", s.ns)
	require.NoError(t, env.Client.Delete(ctx, repo))
	require.NoError(t, env.Client.Delete(ctx, ws))
	require.Eventually(t, func() bool {
		return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(ws), &magosv1.Workspace{}))
	}, time.Minute, 250*time.Millisecond, "deletion does not hang on a missing source")
	assert.Equal(t, 2, stateResources(t, s.ns, "orphan"), "the state is kept when the destroy is skipped")
}

func TestWorkspaceSuspendStopsRuns(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("paused", "infra", func(ws *magosv1.Workspace) { ws.Spec.Suspend = true })

	ws := s.waitWorkspace("paused", time.Minute, "reports suspended", func(ws *magosv1.Workspace) bool {
		c := conditions.Get(ws, magosv1.ReadyCondition)
		return c != nil && c.Reason == magosv1.SuspendedReason
	})
	require.Never(t, func() bool { return planJobs(t, s.ns, "paused") > 0 }, 4*time.Second, 250*time.Millisecond,
		"a suspended Workspace starts no run")

	patch := client.MergeFrom(ws.DeepCopy())
	ws.Spec.Suspend = false
	require.NoError(t, env.Client.Patch(ctx, ws, patch))
	s.waitWorkspace("paused", 3*time.Minute, "runs once resumed", func(ws *magosv1.Workspace) bool {
		return ws.Status.LastApplied != nil
	})
}
