package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/metrics"
)

func TestWorkspaceState(t *testing.T) {
	applied, planned := metav1.NewTime(time.Unix(1700000000, 0)), metav1.NewTime(time.Unix(1700000100, 0))
	drifted := []metav1.Condition{{Type: magosv1.DriftedCondition, Status: metav1.ConditionTrue}}
	tests := []struct {
		name   string
		status magosv1.WorkspaceStatus
		want   metrics.WorkspaceState
	}{
		{"new", magosv1.WorkspaceStatus{Phase: magosv1.PhasePlanning}, metrics.WorkspaceState{}},
		{"applied and drifted", magosv1.WorkspaceStatus{Phase: magosv1.PhaseIdle, Conditions: drifted, LastApplied: &magosv1.AppliedStatus{Time: applied}},
			metrics.WorkspaceState{Drifted: true, LastApplied: applied.Time}},
		{"awaiting approval since the plan", magosv1.WorkspaceStatus{Phase: magosv1.PhaseAwaitingApproval, Plan: &magosv1.PlanStatus{Time: &planned}, LastApplied: &magosv1.AppliedStatus{Time: applied}},
			metrics.WorkspaceState{LastApplied: applied.Time, Awaiting: "AwaitingApproval", AwaitingSince: planned.Time}},
		{"awaiting promotion", magosv1.WorkspaceStatus{Phase: magosv1.PhaseAwaitingPromotion, Plan: &magosv1.PlanStatus{Time: &planned}},
			metrics.WorkspaceState{Awaiting: "AwaitingPromotion", AwaitingSince: planned.Time}},
		{"a state lock left by a run that died", magosv1.WorkspaceStatus{Phase: magosv1.PhaseFailed, Lock: &magosv1.LockStatus{Holder: "web-apply-1", Lease: "web-lock"}},
			metrics.WorkspaceState{LockHeld: true}},
		{"a plan that no longer waits", magosv1.WorkspaceStatus{Phase: magosv1.PhaseApplying, Plan: &magosv1.PlanStatus{Time: &planned}}, metrics.WorkspaceState{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, workspaceState(&magosv1.Workspace{Status: tt.status}))
		})
	}
}
