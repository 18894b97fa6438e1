package decide

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// TestDeletionRuns pins which finished runs let a deleted Workspace go:
// only a succeeded destroy or a succeeded apply of a destroy plan; a
// succeeded destroy plan has destroyed nothing yet.
func TestDeletionRuns(t *testing.T) {
	tests := []struct {
		name                string
		run                 magosv1.RunStatus
		deletion, destroyed bool
	}{
		{name: "plan", run: magosv1.RunStatus{Phase: magosv1.RunPlan, Result: magosv1.ResultSucceeded}},
		{name: "apply", run: magosv1.RunStatus{Phase: magosv1.RunApply, Result: magosv1.ResultSucceeded}},
		{name: "destroy plan", run: magosv1.RunStatus{Phase: magosv1.RunPlan, Mode: magosv1.PlanModeDestroy, Result: magosv1.ResultSucceeded}, deletion: true},
		{name: "destroy apply", run: magosv1.RunStatus{Phase: magosv1.RunApply, Mode: magosv1.PlanModeDestroy, Result: magosv1.ResultSucceeded}, deletion: true, destroyed: true},
		{name: "failed destroy apply", run: magosv1.RunStatus{Phase: magosv1.RunApply, Mode: magosv1.PlanModeDestroy, Result: magosv1.ResultFailed}, deletion: true},
		{name: "stale destroy apply", run: magosv1.RunStatus{Phase: magosv1.RunApply, Mode: magosv1.PlanModeDestroy, Result: magosv1.ResultStale}, deletion: true},
		{name: "destroy without a plan", run: magosv1.RunStatus{Phase: magosv1.RunDestroy, Result: magosv1.ResultSucceeded}, deletion: true, destroyed: true},
		{name: "failed destroy without a plan", run: magosv1.RunStatus{Phase: magosv1.RunDestroy, Result: magosv1.ResultFailed}, deletion: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.deletion, deletionRun(&tt.run), "deletionRun")
			assert.Equal(t, tt.destroyed, destroyed(&tt.run), "destroyed")
		})
	}
}

// TestDeletionRunDescriptions pins how runs are named while they run: the
// apply of a destroy plan is Destroying, and every message says which kind
// of run it is.
func TestDeletionRunDescriptions(t *testing.T) {
	tests := []struct {
		phase string
		mode  magosv1.PlanMode
		drift bool
		want  magosv1.WorkspacePhase
		kind  string
	}{
		{magosv1.RunPlan, "", false, magosv1.PhasePlanning, "plan"},
		{magosv1.RunPlan, "", true, magosv1.PhasePlanning, "drift plan"},
		{magosv1.RunApply, "", false, magosv1.PhaseApplying, "apply"},
		{magosv1.RunPlan, magosv1.PlanModeDestroy, false, magosv1.PhasePlanning, "destroy plan"},
		{magosv1.RunApply, magosv1.PlanModeDestroy, false, magosv1.PhaseDestroying, "destroy apply"},
		{magosv1.RunDestroy, "", false, magosv1.PhaseDestroying, "destroy"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			assert.Equal(t, tt.want, runPhase(tt.phase, tt.mode))
			assert.Equal(t, tt.kind, runKind(tt.phase, tt.mode, tt.drift))
		})
	}
}

// TestDestroyPlanStatus pins what a deleted Workspace's status says while
// its destroy plan waits: the Planned and Applied conditions name a destroy
// plan; awaiting approval is Ready=False without Reconciling or Stalled; a
// policy violation stalls; the messages say how to approve it or let the
// Workspace go.
func TestDestroyPlanStatus(t *testing.T) {
	const rev = "main@sha1:a"
	destroyPlan := &magosv1.PlanStatus{ID: "d1", Revision: rev, HasChanges: true, Destroy: 2, Mode: magosv1.PlanModeDestroy}
	applied := &magosv1.AppliedStatus{PlanID: "p1", Revision: rev}
	tests := []struct {
		name                        string
		obs                         Observation
		ready, reconciling, stalled metav1.ConditionStatus
		readyReason                 string
		readyMessage                []string
	}{
		{name: "planning the destroy is Reconciling",
			obs:   Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhasePlanning, Reason: magosv1.ReasonPlanning, Message: "Run ws-plan-x (destroy plan) of revision " + rev + " is in progress; the Workspace is being deleted"}},
			ready: "False", reconciling: "True", readyReason: magosv1.ReasonPlanning, readyMessage: []string{"destroy plan", "being deleted"}},
		{name: "awaiting approval of the destroy is neither Reconciling nor Stalled",
			obs:   Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseAwaitingApproval, Reason: magosv1.ReasonDestroyAwaitingApproval, Message: destroyApprovalMessage(destroyPlan)}},
			ready: "False", readyReason: magosv1.ReasonDestroyAwaitingApproval,
			readyMessage: []string{"being deleted", "destroy plan d1 (+0 ~0 -2)", `set spec.approvedPlan to "d1"`, "unset spec.destroyOnDelete"}},
		{name: "a destroy blocked by policy stalls",
			obs:   Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonPolicyViolation, Message: destroyBlockedMessage(destroyPlan, "no-delete: databases stay"), Stalled: true}},
			ready: "False", stalled: "True", readyReason: magosv1.ReasonPolicyViolation,
			readyMessage: []string{"being deleted", "destroy plan d1", "blocked by policy: no-delete: databases stay", "unset spec.destroyOnDelete"}},
		{name: "a destroy whose policies could not be evaluated retries",
			obs:   Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonPolicyError, Message: destroyBlockedMessage(destroyPlan, "boom")}},
			ready: "False", reconciling: "True", readyReason: magosv1.ReasonPolicyError},
		{name: "applying the destroy plan is Reconciling",
			obs:   Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseDestroying, Reason: magosv1.ReasonDestroying}},
			ready: "False", reconciling: "True", readyReason: magosv1.ReasonDestroying},
		{name: "a failed destroy retries",
			obs:   Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonDestroyFailed}},
			ready: "False", reconciling: "True", readyReason: magosv1.ReasonDestroyFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Generation: 2, DeletionTimestamp: ptr.To(metav1.Now())}}
			ws.Status = magosv1.WorkspaceStatus{Plan: destroyPlan.DeepCopy(), LastApplied: applied.DeepCopy()}
			ComputeStatus(ws, tt.obs)
			assertCondition(t, ws, magosv1.ReadyCondition, tt.ready)
			assertCondition(t, ws, magosv1.ReconcilingCondition, tt.reconciling)
			assertCondition(t, ws, magosv1.StalledCondition, tt.stalled)
			ready := conditions.Get(ws, magosv1.ReadyCondition)
			assert.Equal(t, tt.readyReason, ready.Reason)
			for _, s := range tt.readyMessage {
				assert.Contains(t, ready.Message, s)
			}
			assert.Equal(t, tt.obs.Decision.Phase, ws.Status.Phase)

			planned := conditions.Get(ws, magosv1.PlannedCondition)
			assert.Equal(t, metav1.ConditionTrue, planned.Status)
			assert.Equal(t, magosv1.ReasonDestroyPlanned, planned.Reason)
			assert.Equal(t, "Destroy plan d1: +0 ~0 -2", planned.Message)
			appliedC := conditions.Get(ws, magosv1.AppliedCondition)
			assert.Equal(t, metav1.ConditionFalse, appliedC.Status)
			assert.Equal(t, "Destroy plan d1 (+0 ~0 -2) is not applied yet; last applied revision "+rev, appliedC.Message)
		})
	}
}
