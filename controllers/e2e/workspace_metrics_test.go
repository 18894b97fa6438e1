package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/metrics/metricstest"
)

// seriesValue sums the series of the in-process metric family name whose
// labels include want: a counter's or gauge's value, a histogram's sample
// count. found says whether any series matched.
func seriesValue(t *testing.T, name string, want map[string]string) (sum float64, found bool) {
	t.Helper()
	n, sum := metricstest.Sum(t, name, want)
	return sum, n > 0
}

// stepCounts are the observations of each run step of phase so far.
func stepCounts(t *testing.T, phase string) map[string]float64 {
	t.Helper()
	counts := map[string]float64{}
	for _, step := range []string{"fetch", "init", "engine", "render", "storage"} {
		counts[step], _ = seriesValue(t, "magos_workspace_run_step_duration_seconds", map[string]string{"phase": phase, "step": step})
	}
	return counts
}

func TestWorkspaceMetricsDescribeTheWorkspace(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	before := stepCounts(t, magosv1.RunPlanApply)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("hello", "infra", nil)
	ws := s.waitWorkspace("hello", 3*time.Minute, "applies", appliedRevision(rev))

	info := map[string]string{"kind": magosv1.WorkspaceKind, "namespace": s.ns, "name": "hello"}
	assert.Eventually(t, func() bool {
		_, ok := seriesValue(t, "magos_resource_info", map[string]string{
			"kind": magosv1.WorkspaceKind, "namespace": s.ns, "name": "hello",
			"ready": "True", "stalled": "false", "suspended": "false", "phase": string(magosv1.PhaseIdle), "revision": rev,
		})
		return ok
	}, 30*time.Second, 100*time.Millisecond, "magos_resource_info says the Workspace is Ready at revision %s", rev)
	infos, _ := seriesValue(t, "magos_resource_info", info)
	assert.Equal(t, 1.0, infos, "one magos_resource_info series per Workspace")

	applied, ok := seriesValue(t, "magos_workspace_last_applied_timestamp_seconds", map[string]string{"namespace": s.ns, "name": "hello"})
	require.True(t, ok, "magos_workspace_last_applied_timestamp_seconds has the Workspace")
	assert.InDelta(t, float64(ws.Status.LastApplied.Time.Unix()), applied, 1)

	// Nothing decides on the plan: one fast run, which renders nothing.
	after := stepCounts(t, magosv1.RunPlanApply)
	for _, step := range []string{"fetch", "init", "engine", "storage"} {
		assert.Greater(t, after[step], before[step], "the fast run's %s step is observed", step)
	}
	assert.Equal(t, before["render"], after["render"], "the fast run starts no engine to render its plan")

	// Where an approval decides, a plan and an apply each report their steps.
	plansBefore, appliesBefore := stepCounts(t, magosv1.RunPlan), stepCounts(t, magosv1.RunApply)
	s.newWorkspace("gated", "infra", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	gated := s.waitWorkspace("gated", 3*time.Minute, "awaits approval", func(ws *magosv1.Workspace) bool { return ws.Status.Phase == magosv1.PhaseAwaitingApproval })
	approve(t, s.ns, "gated", gated.Status.Plan.ID)
	s.waitWorkspace("gated", 3*time.Minute, "applies", appliedRevision(rev))
	plans, applies := stepCounts(t, magosv1.RunPlan), stepCounts(t, magosv1.RunApply)
	for _, step := range []string{"fetch", "init", "engine", "render", "storage"} {
		assert.Greater(t, plans[step], plansBefore[step], "the plan's %s step is observed", step)
		if step == "init" {
			// The configuration uses built-in providers only: its apply skips init.
			assert.Equal(t, appliesBefore[step], applies[step], "the apply of a plan of built-in providers only runs no init")
			continue
		}
		assert.Greater(t, applies[step], appliesBefore[step], "the apply's %s step is observed", step)
	}

	require.NoError(t, env.Client.Delete(context.Background(), ws))
	s.waitGone(ws, time.Minute, "the Workspace is deleted")
	assert.Eventually(t, func() bool {
		_, infoLeft := seriesValue(t, "magos_resource_info", info)
		_, appliedLeft := seriesValue(t, "magos_workspace_last_applied_timestamp_seconds", map[string]string{"namespace": s.ns, "name": "hello"})
		return !infoLeft && !appliedLeft
	}, 30*time.Second, 100*time.Millisecond, "a deleted Workspace's series are removed")
}

func TestWorkspaceMetricsCountAFailedPlanByReason(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	dir := t.TempDir()
	// Init succeeds; the plan fails evaluating the output.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`output "n" { value = tonumber("not a number") }`+"\n"), 0o644))
	failed := map[string]string{"phase": magosv1.RunPlanApply, "reason": magosv1.ReasonPlanFailed}
	before, _ := seriesValue(t, "magos_workspace_run_failures_total", failed)
	s.gitRepository("infra", dir)
	s.newWorkspace("broken", "infra", nil)
	s.waitWorkspace("broken", 3*time.Minute, "fails to plan", func(ws *magosv1.Workspace) bool {
		r := ws.Status.LastRun()
		return r != nil && r.Reason == magosv1.ReasonPlanFailed
	})
	assert.Eventually(t, func() bool {
		after, _ := seriesValue(t, "magos_workspace_run_failures_total", failed)
		return after > before
	}, 30*time.Second, 100*time.Millisecond, "magos_workspace_run_failures_total counts the failed plan as PlanFailed")
}
