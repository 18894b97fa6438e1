package decide

import (
	"time"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// policyRetryInterval is how long a plan whose policies could not be
// evaluated (PolicyError, a retried reason) waits before they are evaluated
// again.
const policyRetryInterval = 30 * time.Second

// phaseOfRun maps a run phase to the Workspace phase while it runs.
var phaseOfRun = map[string]magosv1.WorkspacePhase{
	magosv1.RunPlan:      magosv1.PhasePlanning,
	magosv1.RunApply:     magosv1.PhaseApplying,
	magosv1.RunDestroy:   magosv1.PhaseDestroying,
	magosv1.RunPlanApply: magosv1.PhaseApplying,
}

// runPhase is the Workspace phase while a run of phase and mode runs: the
// apply of a destroy plan is Destroying.
func runPhase(phase string, mode magosv1.PlanMode) magosv1.WorkspacePhase {
	if phase == magosv1.RunApply && mode == magosv1.PlanModeDestroy {
		return magosv1.PhaseDestroying
	}
	return phaseOfRun[phase]
}

// runKind names a run in messages: plan, drift plan, destroy plan, apply,
// destroy apply (of a destroy plan), destroy (without a plan), or plan and
// apply (the fast path).
func runKind(phase string, mode magosv1.PlanMode, drift bool) string {
	if phase == magosv1.RunPlanApply {
		phase = "plan and apply"
	}
	switch {
	case mode == magosv1.PlanModeDestroy:
		return "destroy " + phase
	case drift:
		return "drift " + phase
	}
	return phase
}
