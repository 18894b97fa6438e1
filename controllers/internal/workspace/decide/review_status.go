package decide

import (
	"fmt"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// PlanReview is the approval rules' review of the pending plan that a
// reconcile asked for (Facts.Review), for status.
type PlanReview struct {
	// Plan is the ID of the plan reviewed.
	Plan   string
	Review Review
}

// recordReview records on p which approval rules govern it
// (status.plan.approvalRule) and whether they apply it without an
// approval (status.plan.autoApproved), from the review r of it. Without a
// review, or with one of another plan, p keeps what it says.
func recordReview(p *magosv1.PlanStatus, r *PlanReview) {
	if p == nil || r == nil || r.Plan != p.ID {
		return
	}
	p.ApprovalRule, p.AutoApproved = r.Review.RuleNames(), r.Review.AutoApproved()
}

// ReviewNotes are the notes of the plan status going from before to
// after: AutoApproved once the approval rules apply after's plan without
// an approval and did not say so before (before is another plan, or was
// not auto-approved).
func ReviewNotes(before, after *magosv1.PlanStatus) []Note {
	if after == nil || !after.AutoApproved || (before != nil && before.ID == after.ID && before.AutoApproved) {
		return nil
	}
	return []Note{{Normal, magosv1.ReasonAutoApproved, fmt.Sprintf("Plan %s (%s) is applied without approval: approval rule %s governs it",
		after.ID, PlanSummary(after), after.ApprovalRule)}}
}
