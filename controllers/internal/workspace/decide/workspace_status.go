package decide

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// stalls reports whether a failure with reason needs a person, a new
// revision or a spec change (its class in the API's reason table is
// ReasonStalls): the Workspace says Stalled=True (kstatus: Failed) and
// starts no run until its revision or inputs change. Every other failure
// is retried automatically and says Reconciling=True with reason
// ProgressingWithRetry (kstatus: InProgress) while it waits. A Workspace
// never says Stalled while it retries, and never retries what it calls
// stalling. Only nextRetry and decide ask it.
func stalls(reason string) bool { return magosv1.ReasonStallsRecovery(reason) }

// Observation is what one reconcile of a Workspace saw and decided.
type Observation struct {
	Suspended bool
	// Revision is the source revision the Workspace should be at.
	Revision string
	// Decision is what decide made of the facts.
	Decision Decision
	// Review is the approval rules' review of the pending plan, if the
	// decision asked for one.
	Review *PlanReview
	// Err is the reconcile error, if any.
	Err error
}

// ComputeStatus sets phase, conditions, observedGeneration and the
// approval rules governing the plan (recordReview) from the observation
// and the run data already in ws.Status. It is pure. A Workspace waiting
// for a source artifact, its Project or a VariableSet has o.Err a
// rerror.Wait.
//
// kstatus reads the result as: Current when Ready=True, and also while
// suspended or awaiting approval or promotion (Ready=False without
// Reconciling or Stalled); InProgress while a run is in progress, while
// waiting for a source, Project or VariableSet, and while a failure waits
// to be retried; Failed when the decision stalls.
func ComputeStatus(ws *magosv1.Workspace, o Observation) {
	st := &ws.Status
	d := o.Decision
	if d.Phase != "" {
		st.Phase = d.Phase
	}
	recordReview(st.Plan, o.Review)
	setPlanned(ws, o)
	setApplied(ws)
	setDrifted(ws)
	if p := st.Plan; p != nil {
		p.NextApply = nextApply(p, ModeOf(ws), st.LastApplied)
	}

	// The conditions below describe this generation on every path, errors
	// included: kstatus reads a stale observedGeneration as InProgress, so
	// a Stalled Workspace would otherwise never read as Failed.
	defer func() { st.ObservedGeneration = ws.Generation }()
	switch {
	case o.Err != nil:
		if conditions.MarkError(ws, o.Err) {
			st.Phase = magosv1.PhaseFailed
		}
	case o.Suspended:
		conditions.MarkReady(ws, metav1.ConditionFalse, magosv1.SuspendedReason, "Workspace is suspended; no runs start")
	default:
		switch d.Phase {
		case magosv1.PhaseWaiting, magosv1.PhasePlanning, magosv1.PhaseValidating, magosv1.PhaseApplying, magosv1.PhaseDestroying:
			conditions.MarkReconciling(ws, OrDefault(d.Reason, magosv1.ProgressingReason), d.Message)
		case magosv1.PhaseAwaitingApproval, magosv1.PhaseAwaitingPromotion:
			// Waiting for a person is a settled state, not progress: kstatus
			// reads it as Current while Ready stays False (docs/workspaces.md).
			conditions.MarkReady(ws, metav1.ConditionFalse, d.Reason, d.Message)
		case magosv1.PhaseFailed:
			reason := OrDefault(d.Reason, magosv1.ReasonRunFailed)
			if d.Stalled {
				conditions.MarkStalled(ws, reason, d.Message)
			} else {
				conditions.MarkRetrying(ws, reason, d.Message)
			}
		default:
			conditions.MarkReady(ws, metav1.ConditionTrue, magosv1.ReconciliationSucceededReason, OrDefault(d.Message, "Applied revision "+o.Revision))
		}
	}
}

func setPlanned(ws *magosv1.Workspace, o Observation) {
	p := ws.Status.Plan
	switch {
	case p == nil:
		conditions.Set(ws, magosv1.PlannedCondition, metav1.ConditionFalse, magosv1.ReasonNoPlan, "No plan for the current revision and inputs yet")
	case p.Revision != o.Revision && o.Revision != "":
		conditions.Set(ws, magosv1.PlannedCondition, metav1.ConditionFalse, magosv1.ReasonOutdated,
			fmt.Sprintf("Plan %s is for revision %s; revision %s is not planned yet", p.ID, p.Revision, o.Revision))
	case !p.HasChanges:
		conditions.Set(ws, magosv1.PlannedCondition, metav1.ConditionTrue, magosv1.ReasonNoChanges, fmt.Sprintf("%s %s has no changes", PlanNoun(p), p.ID))
	case p.Mode == magosv1.PlanModeDestroy:
		conditions.Set(ws, magosv1.PlannedCondition, metav1.ConditionTrue, magosv1.ReasonDestroyPlanned, fmt.Sprintf("Destroy plan %s: %s", p.ID, PlanSummary(p)))
	case p.Request.Scoped():
		conditions.Set(ws, magosv1.PlannedCondition, metav1.ConditionTrue, magosv1.ReasonPlanned,
			fmt.Sprintf("%s, for plan request %s (%s)", PlanSummary(p), p.Request.ID, requestFlags(p.Request)))
	default:
		conditions.Set(ws, magosv1.PlannedCondition, metav1.ConditionTrue, magosv1.ReasonPlanned, PlanSummary(p))
	}
}

func setApplied(ws *magosv1.Workspace) {
	a, p := ws.Status.LastApplied, ws.Status.PendingPlan()
	switch {
	case a == nil:
		conditions.Set(ws, magosv1.AppliedCondition, metav1.ConditionFalse, magosv1.ReasonNotApplied, "Nothing applied yet")
	case p != nil:
		conditions.Set(ws, magosv1.AppliedCondition, metav1.ConditionFalse, magosv1.ReasonPendingPlan,
			fmt.Sprintf("%s %s (%s) is not applied yet; last applied revision %s", PlanNoun(p), p.ID, PlanSummary(p), a.Revision))
	default:
		conditions.Set(ws, magosv1.AppliedCondition, metav1.ConditionTrue, magosv1.ReasonApplied,
			fmt.Sprintf("Applied plan %s of revision %s", a.PlanID, a.Revision))
	}
}

// PlanNoun is how messages name plan p: "Destroy plan" or "Plan".
func PlanNoun(p *magosv1.PlanStatus) string {
	if p != nil && p.Mode == magosv1.PlanModeDestroy {
		return "Destroy plan"
	}
	return "Plan"
}

// destroyBlockedMessage says that a deleted Workspace stays because the
// policy gate blocks its destroy plan p, and how to let it go.
func destroyBlockedMessage(p *magosv1.PlanStatus, verdict string) string {
	return fmt.Sprintf("The Workspace is being deleted, but its destroy plan %s (%s) is blocked by policy: %s; "+
		"it stays until the plan passes, or unset spec.destroyOnDelete to delete it and leave its resources in place", p.ID, PlanSummary(p), verdict)
}

// destroyApprovalMessage says that a deleted Workspace's destroy plan p
// awaits approval, and how to approve it or let the Workspace go.
func destroyApprovalMessage(p *magosv1.PlanStatus) string {
	return fmt.Sprintf("The Workspace is being deleted: destroy plan %s (%s) of revision %s awaits approval: set spec.approvedPlan to %q to destroy its resources, "+
		"or unset spec.destroyOnDelete to delete it and leave them in place", p.ID, PlanSummary(p), p.Revision, p.ID)
}

// setDrifted sets Drifted from a drift plan, and in mode PlanOnly from
// every plan: there a plan with changes means the real resources differ
// from the configuration, and nothing will apply it.
func setDrifted(ws *magosv1.Workspace) {
	p, a := ws.Status.Plan, ws.Status.LastApplied
	planOnly := ModeOf(ws) == magosv1.ModePlanOnly
	if p == nil || (!p.Drift && !planOnly) {
		return
	}
	switch {
	case !p.HasChanges:
		conditions.Set(ws, magosv1.DriftedCondition, metav1.ConditionFalse, magosv1.ReasonNoDrift, fmt.Sprintf("%s %s found no changes", checkNoun(p), p.ID))
	case a != nil && a.PlanID == p.ID:
		conditions.Set(ws, magosv1.DriftedCondition, metav1.ConditionFalse, magosv1.ReasonApplied, fmt.Sprintf("Drift corrected by plan %s", p.ID))
	case planOnly:
		conditions.Set(ws, magosv1.DriftedCondition, metav1.ConditionTrue, magosv1.ReasonPlanOnly,
			fmt.Sprintf("%s %s of revision %s found changes (%s); the Workspace is plan-only and does not apply them", checkNoun(p), p.ID, p.Revision, PlanSummary(p)))
	default:
		conditions.Set(ws, magosv1.DriftedCondition, metav1.ConditionTrue, magosv1.ReasonDriftDetected,
			fmt.Sprintf("Drift check %s found changes made outside Magos: %s", p.ID, PlanSummary(p)))
	}
}

// PlanSummary is "+add ~change -destroy".
func PlanSummary(p *magosv1.PlanStatus) string {
	return fmt.Sprintf("+%d ~%d -%d", p.Add, p.Change, p.Destroy)
}

func OrDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
