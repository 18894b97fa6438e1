package decide

import (
	"testing"

	"github.com/stretchr/testify/assert"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// TestHoldForDependencies pins how spec.dependsOn holds a decision that
// starts a run, and only such a decision.
func TestHoldForDependencies(t *testing.T) {
	ready := magosv1.DependencyStatus{Name: "network", Ready: true}
	notReady := magosv1.DependencyStatus{Name: "database", Message: "Workspace database is Planning: Run x is in progress"}
	plan := StartDecision(runjob.Run{Phase: magosv1.RunPlan})
	tests := []struct {
		name     string
		f        Facts
		d        Decision
		phase    magosv1.WorkspacePhase
		reason   string
		stalled  bool
		starts   bool
		contains string
	}{
		{name: "no dependencies: the run starts", f: Facts{}, d: plan, phase: magosv1.PhasePlanning, starts: true},
		{name: "every dependency Ready: the run starts", f: Facts{Dependencies: &DependencyFacts{States: []magosv1.DependencyStatus{ready}}}, d: plan, phase: magosv1.PhasePlanning, starts: true},
		{name: "a dependency not Ready: wait", f: Facts{Dependencies: &DependencyFacts{States: []magosv1.DependencyStatus{ready, notReady}}}, d: plan,
			phase: magosv1.PhaseWaiting, reason: magosv1.ReasonDependencyNotReady, contains: "Waiting for dependencies: Workspace database is Planning"},
		{name: "a cycle stalls", f: Facts{Dependencies: &DependencyFacts{States: []magosv1.DependencyStatus{ready}, Cycle: []string{"app", "network", "app"}}}, d: plan,
			phase: magosv1.PhaseFailed, reason: magosv1.ReasonDependencyCycle, stalled: true, contains: "app → network → app"},
		{name: "a decision that starts nothing is kept", f: Facts{Dependencies: &DependencyFacts{States: []magosv1.DependencyStatus{notReady}}},
			d: Decision{Phase: magosv1.PhaseIdle}, phase: magosv1.PhaseIdle},
		{name: "a deleted Workspace waits for its dependents", f: Facts{Deletion: &DeletionFacts{}, Dependencies: &DependencyFacts{Dependents: []string{"app"}}},
			d: StartDecision(runjob.Run{Phase: magosv1.RunPlan, Mode: magosv1.PlanModeDestroy}), phase: magosv1.PhaseWaiting, reason: magosv1.ReasonDependentsExist, contains: "depend on it to be deleted first: app"},
		{name: "a deleted Workspace without dependents destroys", f: Facts{Deletion: &DeletionFacts{}, Dependencies: &DependencyFacts{States: []magosv1.DependencyStatus{notReady}}},
			d: StartDecision(runjob.Run{Phase: magosv1.RunPlan, Mode: magosv1.PlanModeDestroy}), phase: magosv1.PhasePlanning, starts: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := holdForDependencies(tt.f, tt.d)
			assert.Equal(t, tt.phase, d.Phase)
			if tt.reason != "" {
				assert.Equal(t, tt.reason, d.Reason)
			}
			assert.Equal(t, tt.stalled, d.Stalled)
			assert.Equal(t, tt.starts, d.Action == ActStart)
			assert.Contains(t, d.Message, tt.contains)
		})
	}
}
