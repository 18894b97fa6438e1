package decide

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// assertCondition checks the status of condition typ; "" means absent.
func assertCondition(t *testing.T, ws *magosv1.Workspace, typ string, want metav1.ConditionStatus) {
	t.Helper()
	c := conditions.Get(ws, typ)
	if want == "" {
		assert.Nil(t, c, "%s should be absent", typ)
		return
	}
	if assert.NotNil(t, c, "%s should be set", typ) {
		assert.Equal(t, want, c.Status, "%s status", typ)
	}
}

func TestComputeStatus(t *testing.T) {
	plan := func(id string, changes, drift bool) *magosv1.PlanStatus {
		p := &magosv1.PlanStatus{ID: id, Revision: "main@sha1:a", HasChanges: changes, Drift: drift}
		if changes {
			p.Add = 1
		}
		return p
	}
	applied := &magosv1.AppliedStatus{PlanID: "p1", Revision: "main@sha1:a"}
	type want struct {
		ready, reconciling, stalled metav1.ConditionStatus // "" = absent
		readyReason                 string
		planned, appliedC, drifted  metav1.ConditionStatus
		observedGenerationUpdated   bool
	}
	tests := []struct {
		name   string
		status magosv1.WorkspaceStatus
		obs    Observation
		want   want
	}{
		{name: "applied and idle is Ready",
			status: magosv1.WorkspaceStatus{Plan: plan("p1", true, false), LastApplied: applied},
			obs:    Observation{Revision: "main@sha1:a", Decision: Decision{Phase: magosv1.PhaseIdle}},
			want:   want{ready: "True", readyReason: "Succeeded", planned: "True", appliedC: "True", observedGenerationUpdated: true}},
		{name: "planning is Reconciling",
			obs:  Observation{Revision: "main@sha1:a", Decision: Decision{Phase: magosv1.PhasePlanning, Reason: magosv1.ReasonPlanning}},
			want: want{ready: "False", reconciling: "True", readyReason: magosv1.ReasonPlanning, planned: "False", appliedC: "False", observedGenerationUpdated: true}},
		{name: "awaiting approval is not Ready and not Reconciling",
			status: magosv1.WorkspaceStatus{Plan: plan("p2", true, false), LastApplied: applied},
			obs:    Observation{Revision: "main@sha1:a", Decision: Decision{Phase: magosv1.PhaseAwaitingApproval, Reason: magosv1.ReasonAwaitingApproval}},
			want:   want{ready: "False", readyReason: magosv1.ReasonAwaitingApproval, planned: "True", appliedC: "False", observedGenerationUpdated: true}},
		{name: "drift found is Drifted until applied",
			status: magosv1.WorkspaceStatus{Plan: plan("p3", true, true), LastApplied: applied},
			obs:    Observation{Revision: "main@sha1:a", Decision: Decision{Phase: magosv1.PhaseApplying}},
			want:   want{ready: "False", reconciling: "True", readyReason: "Progressing", planned: "True", appliedC: "False", drifted: "True", observedGenerationUpdated: true}},
		{name: "drift corrected clears Drifted",
			status: magosv1.WorkspaceStatus{Plan: plan("p1", true, true), LastApplied: applied},
			obs:    Observation{Revision: "main@sha1:a", Decision: Decision{Phase: magosv1.PhaseIdle}},
			want:   want{ready: "True", readyReason: "Succeeded", planned: "True", appliedC: "True", drifted: "False", observedGenerationUpdated: true}},
		{name: "stuck lock stalls",
			status: magosv1.WorkspaceStatus{LastApplied: applied},
			obs:    Observation{Revision: "main@sha1:a", Decision: Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonStateLocked, Stalled: true}},
			want:   want{ready: "False", stalled: "True", readyReason: magosv1.ReasonStateLocked, planned: "False", appliedC: "True", observedGenerationUpdated: true}},
		{name: "source not ready is Reconciling",
			obs:  Observation{Err: rerror.Wait(magosv1.ReasonSourceNotReady, "GitRepository x has no artifact yet", 0)},
			want: want{ready: "False", reconciling: "True", readyReason: magosv1.ReasonSourceNotReady, planned: "False", appliedC: "False", observedGenerationUpdated: true}},
		{name: "transient error retries and records the generation",
			obs:  Observation{Err: rerror.Retry("RunnerIdentityFailed", errors.New("conflict"))},
			want: want{ready: "False", reconciling: "True", readyReason: "RunnerIdentityFailed", planned: "False", appliedC: "False", observedGenerationUpdated: true}},
		{name: "stalling error stalls and records the generation",
			obs:  Observation{Err: rerror.Stall("InvalidSpec", errors.New("bad"))},
			want: want{ready: "False", stalled: "True", readyReason: "InvalidSpec", planned: "False", appliedC: "False", observedGenerationUpdated: true}},
		{name: "failed run waiting to retry is Reconciling, never Stalled",
			status: magosv1.WorkspaceStatus{LastApplied: applied},
			obs:    Observation{Revision: "main@sha1:a", Decision: Decision{Phase: magosv1.PhaseFailed, Reason: "InitFailed"}},
			want:   want{ready: "False", reconciling: "True", readyReason: "InitFailed", planned: "False", appliedC: "True", observedGenerationUpdated: true}},
		{name: "suspended is not Ready",
			obs:  Observation{Suspended: true},
			want: want{ready: "False", readyReason: magosv1.SuspendedReason, planned: "False", appliedC: "False", observedGenerationUpdated: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Status: tt.status}
			ws.Status.ObservedGeneration = 2
			ComputeStatus(ws, tt.obs)
			check := func(typ string, want metav1.ConditionStatus) { assertCondition(t, ws, typ, want) }
			check(magosv1.ReadyCondition, tt.want.ready)
			check(magosv1.ReconcilingCondition, tt.want.reconciling)
			check(magosv1.StalledCondition, tt.want.stalled)
			check(magosv1.PlannedCondition, tt.want.planned)
			check(magosv1.AppliedCondition, tt.want.appliedC)
			check(magosv1.DriftedCondition, tt.want.drifted)
			assert.Equal(t, tt.want.readyReason, conditions.Get(ws, magosv1.ReadyCondition).Reason)
			assert.Equal(t, tt.want.observedGenerationUpdated, ws.Status.ObservedGeneration == 3)
		})
	}
}
