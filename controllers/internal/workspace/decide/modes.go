package decide

import (
	"fmt"
	"strings"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// ModeOf is ws's spec.mode, ModeApply when unset.
func ModeOf(ws *magosv1.Workspace) magosv1.WorkspaceMode {
	if ws.Spec.Mode == "" {
		return magosv1.ModeApply
	}
	return ws.Spec.Mode
}

// RolloutGated says whether the governing Rollout gates the Workspace's
// applies: in mode Apply only (a plan-only Workspace applies nothing, and
// no Rollout gates a destroy).
func (f Facts) RolloutGated() bool { return f.Mode == "" || f.Mode == magosv1.ModeApply }

// planMode is the plan mode the Workspace plans in: Destroy while it is
// deleted and in mode Destroy, a normal plan otherwise.
func (f Facts) planMode() magosv1.PlanMode {
	if f.Deletion != nil || f.Mode == magosv1.ModeDestroy {
		return magosv1.PlanModeDestroy
	}
	return ""
}

// planRun is the plan run the Workspace starts now: in the mode's plan
// mode, with the pending plan request's addresses; the fast path's plan
// and apply in one run where nothing decides on the plan (gatedBy).
func (f Facts) planRun(drift bool) runjob.Run {
	if f.gatedBy() == "" {
		return runjob.Run{Phase: magosv1.RunPlanApply, Drift: drift, Request: f.Request}
	}
	return runjob.Run{Phase: magosv1.RunPlan, Mode: f.planMode(), Drift: drift, Request: f.Request}
}

// PlanCurrent says whether f.Plan is the plan to act on: made for this
// revision and inputs, in the plan mode (planMode), and for the pending
// plan request if there is one (none while deleting).
func (f Facts) PlanCurrent() bool {
	p := f.Plan
	if p == nil || p.Revision != f.Revision || p.InputsDigest != f.Inputs || p.Mode != f.planMode() {
		return false
	}
	return f.Request == nil || (p.Request != nil && p.Request.ID == f.Request.ID)
}

// decidePlanOnly settles a plan-only Workspace whose plan has changes:
// the gate's verdict is reported, never acted on, and the plan is never
// applied; a gate that errored is evaluated again and a stale plan is
// planned again (rule 8).
func decidePlanOnly(f Facts) Decision {
	plan := f.Plan
	if f.Gate.Outcome != GatePassed && f.Gate.Outcome != GateBlocked {
		if d, ok := decideGate(f, "Plan "+plan.ID+" could not be checked by policy: "+f.Gate.Message); ok {
			return d
		}
	}
	verdict := "passed policy"
	if f.Gate.Outcome == GateBlocked {
		verdict = "would be blocked by policy: " + f.Gate.Message
	}
	return withDriftReplan(f, Decision{Phase: magosv1.PhaseIdle, Reason: magosv1.ReasonPlanOnly,
		Message: fmt.Sprintf("Plan-only: plan %s of revision %s has changes (%s) and %s; it is not applied", plan.ID, plan.Revision, PlanSummary(plan), verdict)})
}

// settledMessage is the Ready message of a Workspace whose plan has no
// changes or is applied.
func settledMessage(f Facts) string {
	switch f.Mode {
	case magosv1.ModeDestroy:
		return "Destroyed: nothing of revision " + f.Revision + " is left in the state"
	case magosv1.ModePlanOnly:
		return "Plan-only: revision " + f.Revision + " has no changes to apply"
	}
	return "Applied revision " + f.Revision
}

// nextApply says what applying plan p would do in mode, for
// status.plan.nextApply: "apply +1 ~0 -0", "destroy -3", "targeted apply
// +1 ~0 -0 (-target a.b)", "none (plan-only)", or "none" once it is
// applied or when it has no changes.
func nextApply(p *magosv1.PlanStatus, mode magosv1.WorkspaceMode, applied *magosv1.AppliedStatus) string {
	switch {
	case !p.HasChanges || (applied != nil && applied.PlanID == p.ID):
		return "none"
	case mode == magosv1.ModePlanOnly:
		return "none (plan-only; plan " + PlanSummary(p) + ")"
	case p.Mode == magosv1.PlanModeDestroy:
		return fmt.Sprintf("destroy -%d", p.Destroy)
	case p.Request.Scoped() && len(p.Request.Targets) > 0:
		return "targeted apply " + PlanSummary(p) + " (" + requestFlags(p.Request) + ")"
	case p.Request.Scoped():
		return "apply " + PlanSummary(p) + " (" + requestFlags(p.Request) + ")"
	}
	return "apply " + PlanSummary(p)
}

// requestFlags is a plan request as the engine's flags, e.g. "-target a.b
// -replace c.d".
func requestFlags(rq *magosv1.PlanRequest) string {
	var flags []string
	for _, a := range rq.Targets {
		flags = append(flags, "-target "+a)
	}
	for _, a := range rq.Replace {
		flags = append(flags, "-replace "+a)
	}
	return strings.Join(flags, " ")
}

// checkNoun is how Drifted names plan p: "Drift check" or "Plan".
func checkNoun(p *magosv1.PlanStatus) string {
	if p.Drift {
		return "Drift check"
	}
	return "Plan"
}
