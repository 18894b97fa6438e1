package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func approve(t *testing.T, ns, name, planID string) {
	t.Helper()
	patchWorkspace(t, ns, name, func(ws *magosv1.Workspace) { ws.Spec.ApprovedPlan = planID })
}

// applyJobs counts the Jobs of Workspace name that apply: apply Jobs and
// the fast path's plan-apply Jobs.
func applyJobs(t *testing.T, ns, name string) int {
	t.Helper()
	return countJobs(t, ns, name, magosv1.RunApply) + countJobs(t, ns, name, magosv1.RunPlanApply)
}

func countJobs(t *testing.T, ns, name, phase string) int {
	t.Helper()
	var jobs batchv1.JobList
	require.NoError(t, env.Client.List(context.Background(), &jobs, client.InNamespace(ns),
		client.MatchingLabels{magosv1.WorkspaceLabel: name, magosv1.PhaseLabel: phase}))
	return len(jobs.Items)
}

func TestWorkspaceManualApprovalAppliesExactlyTheApprovedPlan(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("manual", "infra", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })

	ws := s.waitWorkspace("manual", 3*time.Minute, "waits for approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	planID := ws.Status.Plan.ID
	assert.Contains(t, readyMessage(ws), planID, "the Ready message says which plan to approve")
	require.Never(t, func() bool { return applyJobs(t, s.ns, "manual") > 0 }, 3*time.Second, 250*time.Millisecond,
		"nothing is applied before approval")

	approve(t, s.ns, "manual", planID)
	ws = s.waitWorkspace("manual", 3*time.Minute, "applies the approved plan", appliedRevision(rev))
	assert.Equal(t, planID, ws.Status.LastApplied.PlanID, "the applied plan is the approved one")
	assert.Equal(t, 1, applyJobs(t, s.ns, "manual"))
}

func TestWorkspaceApprovedPlanMadeStaleIsNotApplied(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	dir := copyConfig(t, "hello")
	s.gitRepository("infra", dir)
	s.newWorkspace("stale", "infra", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	first := s.waitWorkspace("stale", 3*time.Minute, "waits for approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	}).Status.Plan.ID

	// A new commit arrives before the approval: the first plan is stale.
	main := filepath.Join(dir, "main.tf")
	require.NoError(t, os.WriteFile(main, []byte(strings.Replace(readFile(t, main), `default = "hello"`, `default = "bonjour"`, 1)), 0o644))
	rev2 := s.publish("infra", dir)
	ws := s.waitWorkspace("stale", 3*time.Minute, "re-plans the new revision", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval && ws.Status.Plan.Revision == rev2
	})
	require.NotEqual(t, first, ws.Status.Plan.ID)

	approve(t, s.ns, "stale", first)
	require.Never(t, func() bool { return applyJobs(t, s.ns, "stale") > 0 }, 5*time.Second, 250*time.Millisecond,
		"an approval of a superseded plan applies nothing")
	ws = s.waitWorkspace("stale", 10*time.Second, "still waits for the new plan", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval && ws.Status.LastApplied == nil
	})
	assert.NotEqual(t, first, ws.Status.Plan.ID)
}

func readyMessage(ws *magosv1.Workspace) string {
	for _, c := range ws.Status.Conditions {
		if c.Type == magosv1.ReadyCondition {
			return c.Message
		}
	}
	return ""
}
