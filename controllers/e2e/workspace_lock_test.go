package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/workspace"
)

// lockHeld reports whether the Workspace's state lock Lease has a holder.
func lockHeld(ns, name string) bool {
	var lease coordinationv1.Lease
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: magosv1.LockLeaseName(name)}, &lease)
	return err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != ""
}

// waitApplyingWithLock waits until Workspace name applies, its run holds
// the state lock and the engine runs the provisioner of testdata/slow (a
// fast run plans first, in the same Pod).
func (s *stack) waitApplyingWithLock(name string) *magosv1.Workspace {
	s.t.Helper()
	return s.waitWorkspace(name, 3*time.Minute, "starts applying with the lock held", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseApplying && ws.Status.CurrentRun != nil && lockHeld(s.ns, name) &&
			s.runnerSaid(ws.Status.CurrentRun.Job, "Provisioning with 'local-exec'")
	})
}

// runnerSaid says whether the runner of Job job (or the engine it runs)
// printed what.
func (s *stack) runnerSaid(job, what string) bool {
	return strings.Contains(linesWith(s.runnerLogs.String(), "/"+job+"-"), what)
}

func TestRunnerKilledMidApplyLeavesLockThatUnlockRecovers(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "slow"))
	s.newWorkspace("slow", "infra", nil)

	ws := s.waitApplyingWithLock("slow")
	require.NoError(t, s.executor.Kill(s.ns, ws.Status.CurrentRun.Job), "kill the runner as if its node died")

	ws = s.waitWorkspace("slow", time.Minute, "shows the stuck lock", func(ws *magosv1.Workspace) bool {
		return ws.Status.Lock != nil && conditions.IsTrue(ws, magosv1.StalledCondition)
	})
	assert.Equal(t, magosv1.PhaseFailed, ws.Status.Phase)
	assert.Equal(t, magosv1.ReasonStateLocked, conditions.Get(ws, magosv1.StalledCondition).Reason)
	assert.Contains(t, readyMessage(ws), workspace.UnlockAnnotation, "the message says how to unlock")
	holder := ws.Status.Lock.Holder
	require.NotEmpty(t, holder)
	lockSeries := map[string]string{"namespace": s.ns, "name": "slow"}
	assert.Eventually(t, func() bool {
		held, ok := seriesValue(t, "magos_workspace_state_lock_held", lockSeries)
		return ok && held == 1
	}, 10*time.Second, 100*time.Millisecond, "magos_workspace_state_lock_held names the Workspace")
	require.Never(t, func() bool { return applyJobs(t, s.ns, "slow") > 1 }, 4*time.Second, 250*time.Millisecond,
		"no run starts while the lock is held")

	patch := client.MergeFrom(ws.DeepCopy())
	ws.Annotations = map[string]string{workspace.UnlockAnnotation: holder}
	require.NoError(t, env.Client.Patch(ctx, ws, patch))
	ws = s.waitWorkspace("slow", 3*time.Minute, "recovers after the unlock", appliedRevision(rev))
	assert.Nil(t, ws.Status.Lock)
	assert.False(t, lockHeld(s.ns, "slow"))
	assert.Eventually(t, func() bool {
		_, ok := seriesValue(t, "magos_workspace_state_lock_held", lockSeries)
		return !ok
	}, 10*time.Second, 100*time.Millisecond, "the released lock's series is removed")
}

func TestControllerRestartAdoptsRunningJob(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "slow"))
	s.newWorkspace("adopt", "infra", nil)
	s.waitWorkspace("adopt", 3*time.Minute, "starts applying", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseApplying
	})

	s.stopController()
	s.startController()
	s.waitWorkspace("adopt", 3*time.Minute, "finishes the adopted apply", appliedRevision(rev))
	assert.Equal(t, 1, applyJobs(t, s.ns, "adopt"), "the restarted controller adopted the running apply")
	assert.Equal(t, 1, planJobs(t, s.ns, "adopt"))

	// A restart with nothing changed starts nothing.
	s.stopController()
	s.startController()
	require.Never(t, func() bool { return applyJobs(t, s.ns, "adopt")+planJobs(t, s.ns, "adopt") > 2 },
		5*time.Second, 250*time.Millisecond, "a restart with nothing changed creates no Job")
}

// planJobs counts the Jobs of Workspace name that plan: plan Jobs and the
// fast path's plan-apply Jobs.
func planJobs(t *testing.T, ns, name string) int {
	t.Helper()
	return countJobs(t, ns, name, magosv1.RunPlan) + countJobs(t, ns, name, magosv1.RunPlanApply)
}
