package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestCLIGetApproveWait drives get, approve and wait through a manual
// approval: a stale approval is refused, the current one applies, and
// wait --applied returns once the revision is applied.
func TestCLIGetApproveWait(t *testing.T) {
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("manual", "infra", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })

	r := s.magos("wait", "manual", "--applied", "--timeout", "2s")
	assert.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stderr, "timed out after 2s waiting for Workspace manual to apply its source revision", "%s", r)

	ws := s.waitWorkspace("manual", 3*time.Minute, "waits for approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	planID := ws.Status.Plan.ID

	t.Run("get lists the Workspace with its plan", func(t *testing.T) {
		r := s.magos("get")
		require.Equal(t, 0, r.code, "%s", r)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		require.Len(t, lines, 2, "%s", r)
		assert.Equal(t, []string{"NAME", "PHASE", "REVISION", "PLAN", "POLICY", "LOCK", "LAST", "RUN", "MESSAGE"}, strings.Fields(lines[0]))
		row := strings.Fields(lines[1])
		assert.Equal(t, []string{"manual", "AwaitingApproval"}, row[:2])
		p := ws.Status.Plan
		assert.Contains(t, lines[1], fmt.Sprintf("+%d ~%d -%d", p.Add, p.Change, p.Destroy))
		assert.Contains(t, lines[1], "plan Succeeded")
		assert.Contains(t, lines[1], planID, "the Ready message names the plan to approve")

		r = s.magos("status", "manual", "-o", "json")
		require.Equal(t, 0, r.code, "%s", r)
		var got magosv1.Workspace
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
		assert.Equal(t, "Workspace", got.Kind)
		assert.Equal(t, planID, got.Status.Plan.ID)

		r = s.magos("get", "workspaces", "-A", "-l", "env=nowhere")
		assert.Equal(t, 0, r.code, "%s", r)
		assert.Contains(t, r.stderr, "No workspaces found.")

		r = s.magos("get", "missing")
		assert.Equal(t, 1, r.code, "%s", r)
		assert.Contains(t, r.stderr, `workspace "missing" not found in namespace "`+s.ns+`"`)
	})

	t.Run("approving a stale plan ID is refused", func(t *testing.T) {
		r := s.magos("approve", "manual", "--plan", "an-older-plan")
		assert.Equal(t, 1, r.code, "%s", r)
		assert.Contains(t, r.stderr, "the current plan is "+planID+", not an-older-plan")
		require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "manual"}, ws))
		assert.Empty(t, ws.Spec.ApprovedPlan, "nothing was approved")
	})

	t.Run("get --watch prints the Workspace again as it changes", func(t *testing.T) {
		out := s.magosInBackground("get", "manual", "--watch")
		require.Eventually(t, func() bool { return strings.Contains(out.String(), "AwaitingApproval") }, 30*time.Second, 100*time.Millisecond)
		require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "manual"}, ws))
		patch := client.MergeFrom(ws.DeepCopy())
		ws.Spec.Suspend = true
		require.NoError(t, env.Client.Patch(ctx, ws, patch))
		require.Eventually(t, func() bool { return strings.Contains(out.String(), "AwaitingApproval (suspended)") }, 30*time.Second,
			100*time.Millisecond, "the change is printed: %s", out)
		patch = client.MergeFrom(ws.DeepCopy())
		ws.Spec.Suspend = false
		require.NoError(t, env.Client.Patch(ctx, ws, patch))
	})

	t.Run("approve --wait applies the current plan", func(t *testing.T) {
		r := s.magos("approve", "manual", "--plan", planID, "--wait", "--timeout", "3m")
		require.Equal(t, 0, r.code, "%s", r)
		assert.Contains(t, r.stdout, "plan "+planID+" approved")
		assert.Contains(t, r.stdout, "plan "+planID+" applied (revision "+rev+")")
		ws = s.waitWorkspace("manual", 5*time.Second, "reports the apply", appliedRevision(rev))
		assert.Equal(t, planID, ws.Status.LastApplied.PlanID)

		r = s.magos("approve", "manual")
		assert.Equal(t, 1, r.code, "%s", r)
		assert.Contains(t, r.stderr, "has no plan awaiting approval")
	})

	t.Run("wait --applied returns once the revision is applied", func(t *testing.T) {
		for _, arg := range []string{"--applied", "--applied=" + rev} {
			r := s.magos("wait", "manual", arg, "--timeout", "30s")
			require.Equal(t, 0, r.code, "%s", r)
			assert.Contains(t, r.stdout, "revision "+rev+" applied (plan "+planID+")")
		}
	})
}

// TestCLIWaitFailsOnAStalledWorkspace: wait --applied exits 1 with the
// Ready message once the Workspace stalls, before its timeout.
func TestCLIWaitFailsOnAStalledWorkspace(t *testing.T) {
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("lost", "infra", func(ws *magosv1.Workspace) { ws.Spec.Path = "no/such/dir" })

	start := time.Now()
	r := s.magos("wait", "lost", "--applied", "--timeout", "4m")
	assert.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stderr, "Workspace lost is stalled (PathNotFound)", "%s", r)
	assert.Less(t, time.Since(start), 3*time.Minute, "it does not wait for the timeout")
}
