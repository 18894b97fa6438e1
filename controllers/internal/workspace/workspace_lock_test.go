package workspace_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace"
)

// holdLock makes the Workspace's state lock Lease, which the controller
// reserves before a run, held by holder, as a runner that died holding it
// leaves it, and returns the Lease.
func holdLock(t testing.TB, ns, ws, holder string) *coordinationv1.Lease {
	t.Helper()
	ctx := context.Background()
	lease := &coordinationv1.Lease{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: magosv1.LockLeaseName(ws)}, lease), "the lock Lease is reserved")
	lease.Spec.HolderIdentity = ptr.To(holder)
	lease.Spec.AcquireTime = &metav1.MicroTime{Time: time.Now()}
	require.NoError(t, env.Client.Update(ctx, lease))
	return lease
}

// A run that finds the state lock held stalls the Workspace with
// StateLocked and the holder in status.lock; no run starts, not even after
// the retry interval. The unlock annotation naming the holder deletes that
// Lease and plans at once.
func TestStuckLockIsReleasedByTheUnlockAnnotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const retry = time.Hour // "at once" is long before this
	const holder = "5b8f2f5e-3c1a-4a49-9d0e-2f1f3c8a7d10"
	f := newFixture(t, retry)
	f.newWorkspace("locked", nil)
	first := waitJob(t, f.ns, "locked", magosv1.RunPlan)
	held := holdLock(t, f.ns, "locked", holder)
	report(t, first, magosv1.RunResult{Result: magosv1.ResultLocked, Reason: magosv1.ReasonStateLocked, LockHolder: holder,
		Message: "the state is locked by " + holder})

	ws := f.waitWorkspace("locked", "shows the stuck lock", func(ws *magosv1.Workspace) bool { return ws.Status.Lock != nil })
	assert.Equal(t, magosv1.PhaseFailed, ws.Status.Phase)
	assertReadiness(t, ws, readiness{
		Ready: "False/" + magosv1.ReasonStateLocked, Stalled: "True/" + magosv1.ReasonStateLocked, Kstatus: status.FailedStatus,
	})
	assert.Equal(t, holder, ws.Status.Lock.Holder)
	assert.Equal(t, held.Name, ws.Status.Lock.Lease)
	assert.Contains(t, readyMessage(ws), workspace.UnlockAnnotation+"="+holder, "the message says how to unlock")
	assert.Len(t, runJobs(t, f.ns, "locked"), 1, "no run starts while the lock is held")

	f.update("locked", func(ws *magosv1.Workspace) {
		ws.Annotations = map[string]string{workspace.UnlockAnnotation: holder}
	})
	second := waitJob(t, f.ns, "locked", magosv1.RunPlan)
	assert.NotEqual(t, first.Name, second.Name)
	lease := &coordinationv1.Lease{}
	err := env.Client.Get(ctx, client.ObjectKeyFromObject(held), lease)
	if err == nil {
		assert.NotEqual(t, held.UID, lease.UID, "the held Lease was deleted (a free one is made again for the next runjob.Run)")
		assert.Empty(t, ptr.Deref(lease.Spec.HolderIdentity, ""), "and nobody holds the new one")
	} else {
		assert.True(t, apierrors.IsNotFound(err), "reading the lock Lease: %v", err)
	}
	ws = f.waitWorkspace("locked", "plans after the unlock", inPhase(magosv1.PhasePlanning))
	assert.Nil(t, ws.Status.Lock)
	assertReadiness(t, ws, readiness{Ready: "False/" + magosv1.ReasonPlanning, Reconciling: "True/" + magosv1.ReasonPlanning, Kstatus: status.InProgressStatus})
}
