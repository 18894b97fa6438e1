package workspace

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/apis/plansummary"
	"github.com/magos-dev/magos/controllers/internal/approvalrules"
	"github.com/magos-dev/magos/controllers/internal/rerror"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
)

// reviewOf reviews the pending plan under the approval rules at now and
// records in status which rule governs it (an AutoApproved event the first
// time one applies it without approval). The stored plan is read only
// where a rule reads plan.resources.
func (r *Reconciler) reviewOf(ctx context.Context, ws *magosv1.Workspace, s settings, plan *magosv1.PlanStatus, now time.Time) (decide.Review, error) {
	p := approvalrules.Plan{
		Add: int64(plan.Add), Change: int64(plan.Change), Destroy: int64(plan.Destroy),
		DestroyMode: plan.Mode == magosv1.PlanModeDestroy, Drift: plan.Drift,
		Name: ws.Name, Namespace: ws.Namespace, Labels: ws.Labels,
	}
	if s.ApprovalRules.ReadsResources() {
		var err error
		if p.Resources, err = r.planResources(ctx, ws, plan); err != nil {
			return decide.Review{}, err
		}
	}
	rule, err := s.ApprovalRules.Govern(p)
	if err != nil {
		return decide.Review{}, rerror.Stall(magosv1.ReasonInvalidApprovalRule, err)
	}
	rv := decide.ReviewPlan(rule, plan, ws.Spec.Approvals, ws.Spec.ApprovedPlan, now, s.ApprovalMaxAge)
	if rv.Auto && !plan.AutoApproved {
		r.event(ws, corev1.EventTypeNormal, magosv1.ReasonAutoApproved, "Plan %s (%s) is applied without approval: approval rule %s governs it", plan.ID, decide.PlanSummary(plan), rv.Rule)
	}
	plan.ApprovalRule, plan.AutoApproved = rv.Rule, rv.Auto
	return rv, nil
}

// planResources are the resource changes of the stored plan, read as the
// policy gate reads it (bounded, and only the bundle recorded with the
// plan). A plan too large to read stalls: the same plan never fits.
func (r *Reconciler) planResources(ctx context.Context, ws *magosv1.Workspace, plan *magosv1.PlanStatus) ([]plansummary.ResourceChange, error) {
	stored, err := planstore.LoadJSONSealed(ctx, r.planGetter(ws.Namespace), ws.Name, r.Options.maxPlanJSONBytes(), plan.BundleDigest)
	switch {
	case errors.Is(err, planstore.ErrTooLarge):
		return nil, rerror.Stall(magosv1.ReasonInvalidApprovalRule, fmt.Errorf("an approval rule reads plan.resources, but the stored plan is too large to read: %w", err))
	case err != nil:
		return nil, fmt.Errorf("reading the stored plan for the approval rules: %w", err)
	case stored.ID != plan.ID:
		return nil, fmt.Errorf("reading the stored plan for the approval rules: it is %s, not %s", stored.ID, plan.ID)
	}
	parsed, err := plansummary.Parse(stored.JSON)
	if err != nil {
		return nil, fmt.Errorf("reading the stored plan for the approval rules: %w", err)
	}
	return parsed.ResourceChanges, nil
}
