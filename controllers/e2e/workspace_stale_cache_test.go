package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/workspace"
)

// A reconcile right after a run started reads Jobs from a cache that has
// not seen the new Job: the run is in progress, not JobMissing. Only once
// a live read finds the Job and its Pod gone is the run recorded missing.
func TestStaleCacheNeverRecordsALiveRunAsMissing(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStackWith(t, stackOptions{NoControllers: true})
	s.gitRepository("infra", copyConfig(t, "slow"))
	s.newWorkspace("lagging", "infra", nil)
	r := s.laggingReconciler(newLaggingClient(t, s.ns))

	require.NoError(t, s.reconcileOnce(r, "lagging"), "starts the plan")
	ws := s.getWorkspace("lagging")
	require.NotNil(t, ws.Status.CurrentRun, "a run started")
	job := ws.Status.CurrentRun.Job
	for range 3 {
		require.NoError(t, s.reconcileOnce(r, "lagging"))
	}
	ws = s.getWorkspace("lagging")
	require.NotNil(t, ws.Status.CurrentRun, "the run the cache does not show is still the current run")
	assert.Equal(t, job, ws.Status.CurrentRun.Job)
	assert.Equal(t, "Running", ws.Status.CurrentRun.Result)
	assert.Empty(t, ws.Status.History, "nothing was recorded for a live run")
	assert.Equal(t, magosv1.PhaseApplying, ws.Status.Phase, "the fast path plans and applies in the run")
	assert.Equal(t, 1, planJobs(t, s.ns, "lagging"), "no second Job")

	// Gone for real: the Job and its Pod.
	require.NoError(t, env.Client.Delete(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: job}},
		client.PropagationPolicy(metav1.DeletePropagationBackground)))
	require.Eventually(t, func() bool {
		var pods corev1.PodList
		require.NoError(t, env.Client.List(ctx, &pods, client.InNamespace(s.ns), client.MatchingLabels{"job-name": job}))
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: job}, &batchv1.Job{})
		return len(pods.Items) == 0 && apierrors.IsNotFound(err)
	}, time.Minute, 250*time.Millisecond, "the Job and its Pod go")
	require.NoError(t, s.reconcileOnce(r, "lagging"))
	ws = s.getWorkspace("lagging")
	require.NotEmpty(t, ws.Status.History)
	assert.Equal(t, job, ws.Status.History[0].Job)
	assert.Equal(t, magosv1.ReasonJobMissing, ws.Status.History[0].Reason)
}

// A status patch that loses a conflict after a Job was created forgets the
// run; the next reconcile, reading a cache that lags, must adopt that Job,
// not start another run (here a plan of a newer revision next to a running
// apply).
func TestLostStatusPatchNeverStartsASecondJob(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	dir := copyConfig(t, "slow")
	s.gitRepository("infra", dir)
	s.newWorkspace("conflict", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Approval = magosv1.ApprovalManual
		ws.Spec.Vars = []magosv1.Variable{{Name: "pause", Value: ptr.To("30")}}
	})
	ws := s.waitWorkspace("conflict", 3*time.Minute, "waits for approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	s.stopController()

	lc := newLaggingClient(t, s.ns)
	lc.Conflicts.Store(1)
	r := s.laggingReconciler(lc)
	patch := client.MergeFrom(ws.DeepCopy())
	ws.Spec.ApprovedPlan = ws.Status.Plan.ID
	require.NoError(t, env.Client.Patch(ctx, ws, patch))

	err := s.reconcileOnce(r, "conflict")
	require.True(t, apierrors.IsConflict(err), "the status patch lost: %v", err)
	require.Equal(t, 1, applyJobs(t, s.ns, "conflict"), "the apply started")
	ws = s.getWorkspace("conflict")
	require.Nil(t, ws.Status.CurrentRun, "and its start is not in status")

	// A newer revision arrives; the lagging cache shows no running Job.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "extra.tf"), []byte("locals {\n  extra = 1\n}\n"), 0o644))
	s.publish("infra", dir)
	require.NoError(t, s.reconcileOnce(r, "conflict"))

	ws = s.getWorkspace("conflict")
	require.NotNil(t, ws.Status.CurrentRun)
	assert.Equal(t, magosv1.RunApply, ws.Status.CurrentRun.Phase, "the running apply was adopted")
	assert.Equal(t, magosv1.PhaseApplying, ws.Status.Phase)
	assert.Len(t, unfinishedJobs(t, s.ns, "conflict"), 1, "one run at a time")
	assert.Equal(t, 1, planJobs(t, s.ns, "conflict"), "no plan started next to the apply")
}

// The unlock annotation releases a stuck lock only when no run of the
// Workspace is in progress, checked live: after a status conflict forgot
// that the unlock already happened and a new run took the lock, the same
// annotation must not release the new run's lock.
func TestUnlockIsRefusedWhileARunHoldsTheLock(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "slow"))
	s.newWorkspace("unlock", "infra", nil)
	ws := s.waitApplyingWithLock("unlock")
	require.NoError(t, s.executor.Kill(s.ns, ws.Status.CurrentRun.Job))
	ws = s.waitWorkspace("unlock", time.Minute, "shows the stuck lock", func(ws *magosv1.Workspace) bool {
		return ws.Status.Lock != nil && conditions.IsTrue(ws, magosv1.StalledCondition)
	})
	s.stopController()

	lc := newLaggingClient(t, s.ns)
	lc.Conflicts.Store(1)
	r := s.laggingReconciler(lc)
	patch := client.MergeFrom(ws.DeepCopy())
	ws.Annotations = map[string]string{workspace.UnlockAnnotation: ws.Status.Lock.Holder}
	require.NoError(t, env.Client.Patch(ctx, ws, patch))

	err := s.reconcileOnce(r, "unlock")
	require.True(t, apierrors.IsConflict(err), "the status patch lost: %v", err)
	require.Equal(t, 2, planJobs(t, s.ns, "unlock"), "the unlock released the lock and a new plan started")
	ws = s.getWorkspace("unlock")
	require.NotNil(t, ws.Status.Lock, "status still shows the old lock")
	var lease coordinationv1.Lease
	key := client.ObjectKey{Namespace: s.ns, Name: magosv1.LockLeaseName("unlock")}
	require.NoError(t, env.Client.Get(ctx, key, &lease))
	leaseUID := lease.UID

	require.NoError(t, s.reconcileOnce(r, "unlock"))
	require.NoError(t, env.Client.Get(ctx, key, &lease), "the new run's lock Lease is kept")
	assert.Equal(t, leaseUID, lease.UID, "and not deleted and made again")
	ws = s.getWorkspace("unlock")
	assert.Contains(t, readyMessage(ws), "Not releasing the state lock")
	assert.Equal(t, magosv1.ReasonStateLocked, conditions.Get(ws, magosv1.StalledCondition).Reason)
	assert.Len(t, unfinishedJobs(t, s.ns, "unlock"), 1, "one run at a time")
}
