package decide

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestReviewStatus pins what the approval rules' review of the pending
// plan writes to status (ComputeStatus: status.plan.approvalRule and
// autoApproved) and the AutoApproved note the change brings (ReviewNotes):
// gathering the review writes nothing.
func TestReviewStatus(t *testing.T) {
	plan := func(id, rule string, auto bool) *magosv1.PlanStatus {
		return &magosv1.PlanStatus{ID: id, Revision: "main@sha1:b", HasChanges: true, Add: 1, ApprovalRule: rule, AutoApproved: auto}
	}
	review := func(id string, rv Review) *PlanReview { return &PlanReview{Plan: id, Review: rv} }
	auto := Review{Rule: "additions", Auto: true, Needed: 1}
	const autoNote = "AutoApproved: Plan p2 (+1 ~0 -0) is applied without approval: approval rule additions governs it"
	tests := []struct {
		name   string
		before *magosv1.PlanStatus
		review *PlanReview
		// rule and auto are status.plan's approvalRule and autoApproved after.
		rule  string
		auto  bool
		notes []string
	}{
		{name: "no review: the plan keeps what it says", before: plan("p2", "deletions", false),
			rule: "deletions"},
		{name: "a review of another plan records nothing", before: plan("p2", "", false), review: review("p1", auto)},
		{name: "a rule asking approvals is recorded", before: plan("p2", "", false), review: review("p2", Review{Rule: "deletions", Needed: 2}),
			rule: "deletions"},
		{name: "no rule governs: one approval, no rule named", before: plan("p2", "deletions", false), review: review("p2", Review{Needed: 1})},
		{name: "a rule applies the plan without approval: recorded, with a note", before: plan("p2", "", false), review: review("p2", auto),
			rule: "additions", auto: true, notes: []string{autoNote}},
		{name: "said already: no second note", before: plan("p2", "additions", true), review: review("p2", auto),
			rule: "additions", auto: true},
		{name: "the Project's floor asks an approval: not auto-approved, both rules named", before: plan("p2", "", false),
			review: review("p2", auto.WithFloor(Review{Rule: "prod", Needed: 1})),
			rule:   "additions, prod (Project)"},
		{name: "the Project's floor applies it too: auto-approved", before: plan("p2", "", false),
			review: review("p2", auto.WithFloor(Review{Rule: "prod", Auto: true, Needed: 1})),
			rule:   "additions, prod (Project)", auto: true,
			notes: []string{"AutoApproved: Plan p2 (+1 ~0 -0) is applied without approval: approval rule additions, prod (Project) governs it"}},
		{name: "a rule that no longer applies it without approval", before: plan("p2", "additions", true), review: review("p2", Review{Rule: "all", Needed: 1}),
			rule: "all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "ws", Generation: 1}}
			ws.Status.Plan = tt.before.DeepCopy()
			ComputeStatus(ws, Observation{Review: tt.review})
			assert.Equal(t, tt.rule, ws.Status.Plan.ApprovalRule, "status.plan.approvalRule")
			assert.Equal(t, tt.auto, ws.Status.Plan.AutoApproved, "status.plan.autoApproved")
			var notes []string
			for _, n := range ReviewNotes(tt.before, ws.Status.Plan) {
				assert.Equal(t, Normal, n.Type)
				notes = append(notes, n.Reason+": "+n.Message)
			}
			assert.Equal(t, tt.notes, notes)
		})
	}
}

// TestReviewNotesOfANewPlan: a plan the rules apply without approval is
// noted when it replaces another that was, and nothing is noted without a
// plan.
func TestReviewNotesOfANewPlan(t *testing.T) {
	p1 := &magosv1.PlanStatus{ID: "p1", AutoApproved: true, ApprovalRule: "additions"}
	p2 := &magosv1.PlanStatus{ID: "p2", AutoApproved: true, ApprovalRule: "additions", Add: 1, HasChanges: true}
	assert.Len(t, ReviewNotes(p1, p2), 1)
	assert.Len(t, ReviewNotes(nil, p2), 1)
	assert.Empty(t, ReviewNotes(p2, nil))
	assert.Empty(t, ReviewNotes(nil, nil))
	assert.NotPanics(t, func() { recordReview(nil, &PlanReview{Plan: "p2", Review: Review{Auto: true}}) })
}
