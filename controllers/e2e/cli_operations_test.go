package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace"
)

func (s *stack) workspace(name string) *magosv1.Workspace {
	s.t.Helper()
	ws := &magosv1.Workspace{}
	require.NoError(s.t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: name}, ws))
	return ws
}

// TestCLIReplanRetrySuspend: replan plans again with nothing changed,
// retry and unlock refuse a healthy Workspace, suspend and resume flip
// spec.suspend.
func TestCLIReplanRetrySuspend(t *testing.T) {
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("hello", "infra", nil)
	s.waitWorkspace("hello", 3*time.Minute, "applies", appliedRevision(rev))

	r := s.magos("retry", "hello")
	assert.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stderr, "has no failed run to retry")
	assert.Contains(t, r.stderr, "kubectl magos replan hello", "the refusal says what to do instead")

	r = s.magos("unlock", "hello", "--yes")
	assert.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stderr, "shows no stuck state lock")
	assert.NotContains(t, s.workspace("hello").Annotations, workspace.UnlockAnnotation)

	plans := planJobs(t, s.ns, "hello")
	r = s.magos("replan", "hello", "--wait", "--timeout", "3m")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Contains(t, r.stdout, "request handled")
	ws := s.workspace("hello")
	assert.Equal(t, ws.Annotations[magosv1.ReconcileRequestAnnotation], ws.Status.LastHandledReconcileAt)
	assert.Equal(t, plans+1, planJobs(t, s.ns, "hello"), "the request started one plan")
	assert.Nil(t, ws.Status.CurrentRun, "--wait returned after the run finished")

	r = s.magos("suspend", "workspace", "hello")
	require.Equal(t, 0, r.code, "%s", r)
	assert.True(t, s.workspace("hello").Spec.Suspend)
	r = s.magos("resume", "ws", "hello")
	require.Equal(t, 0, r.code, "%s", r)
	assert.False(t, s.workspace("hello").Spec.Suspend)
	r = s.magos("suspend", "project", "hello")
	assert.Equal(t, 2, r.code, "%s", r)
}

// TestCLIUnlockReleasesAStuckLock: unlock shows the holder of the lock a
// killed runner left, does nothing unless confirmed, and the Workspace
// recovers once it is.
func TestCLIUnlockReleasesAStuckLock(t *testing.T) {
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "slow"))
	s.newWorkspace("slow", "infra", nil)
	ws := s.waitApplyingWithLock("slow")
	require.NoError(t, s.executor.Kill(s.ns, ws.Status.CurrentRun.Job))
	ws = s.waitWorkspace("slow", time.Minute, "shows the stuck lock", func(ws *magosv1.Workspace) bool { return ws.Status.Lock != nil })
	holder := ws.Status.Lock.Holder

	r := s.magos("retry", "slow")
	require.Equal(t, 0, r.code, "a failed run can be retried: %s", r)

	r = s.magosWithInput("n\n", "unlock", "slow")
	assert.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stdout, "is held by "+holder)
	assert.Contains(t, r.stderr, "not confirmed")
	assert.NotContains(t, s.workspace("slow").Annotations, workspace.UnlockAnnotation)

	r = s.magosWithInput("y\n", "unlock", "slow")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Equal(t, holder, s.workspace("slow").Annotations[workspace.UnlockAnnotation])
	// wait fails fast on a stalled Workspace, so it starts once the
	// controller has acted on the confirmation.
	s.waitWorkspace("slow", time.Minute, "releases the lock", func(ws *magosv1.Workspace) bool { return ws.Status.Lock == nil })
	r = s.magos("wait", "slow", "--applied", "--timeout", "3m")
	require.Equal(t, 0, r.code, "%s", r)
	s.waitWorkspace("slow", 10*time.Second, "recovered", appliedRevision(rev))
}

// TestCLIRollout: promote refuses an unknown stage with the list of
// stages and admits a Manual one; abort stops a revision; suspend and
// resume a Rollout.
func TestCLIRollout(t *testing.T) {
	f := newRolloutFixture(t, 1, devThenProd(), nil)
	var rev1 string
	f.waitRollout(3*time.Minute, "prod waits for promotion", func(ro *magosv1.Rollout) bool {
		rev1 = ro.Status.Revision
		return rev1 != "" && stageIs("prod", magosv1.StageWaitingForPromotion, rev1)(ro)
	})

	r := f.magos("get", "rollouts")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Contains(t, r.stdout, "dev:Succeeded,prod:WaitingForPromotion")

	r = f.magos("promote", "release", "qa")
	assert.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stderr, `Rollout release has no stage "qa"; its stages are: dev, prod`)
	assert.Empty(t, f.rollout().Spec.Promotions)

	r = f.magos("promote", "release", "prod")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Equal(t, []magosv1.Promotion{{Stage: "prod", Revision: rev1}}, f.rollout().Spec.Promotions)
	r = f.magos("wait", f.stages[1][0], "--applied="+rev1, "--timeout", "3m")
	require.Equal(t, 0, r.code, "%s", r)
	f.waitRollout(time.Minute, "rolled out", rolledOut(rev1))
	r = f.magos("tree", "app")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Contains(t, r.stdout, "Rollout release, revision "+rev1)
	assert.Contains(t, r.stdout, "Stage prod: Succeeded, admitted "+rev1+"; 1 Workspace, 1 distinct plan\n      Workspace "+f.stages[1][0]+": Idle, applied "+rev1)

	r = f.magos("suspend", "rollout", "release")
	require.Equal(t, 0, r.code, "%s", r)
	assert.True(t, f.rollout().Spec.Suspend)
	r = f.magos("resume", "rollout", "release")
	require.Equal(t, 0, r.code, "%s", r)
	assert.False(t, f.rollout().Spec.Suspend)

	rev2 := f.commit("v2")
	f.waitRollout(3*time.Minute, "prod waits for the promotion of the new revision", stageIs("prod", magosv1.StageWaitingForPromotion, rev2))
	r = f.magos("abort", "release")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Equal(t, rev2, f.rollout().Annotations[magosv1.AbortAnnotation])
	f.waitRollout(time.Minute, "prod is halted by the abort", stageIs("prod", magosv1.StageHalted, rev2))
}
