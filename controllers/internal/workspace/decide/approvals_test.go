package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestRecordApprovals(t *testing.T) {
	t1, t2 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 13, 0, 0, 0, time.UTC)
	p := &magosv1.PlanStatus{ID: "p2", Digest: "sha256:plan"}
	entries := []magosv1.Approval{
		{Plan: "p1", User: "carol"},                      // another plan
		{Plan: "p2", Digest: "sha256:old", User: "dave"}, // another digest
		{Plan: "p2", Digest: "sha256:plan", User: "alice", Groups: []string{"platform-admins"}},
	}
	notes := RecordApprovals(p, entries, t1)
	want := []magosv1.PlanApproval{{User: "alice", Groups: []string{"platform-admins"}, Time: metav1.NewTime(t1)}}
	assert.Equal(t, want, p.Approvals)
	assert.Equal(t, []Note{{Normal, magosv1.ReasonApproved, "Plan p2 (" + PlanSummary(p) + ") approved by alice (groups platform-admins)"}}, notes)

	entries = append(entries, magosv1.Approval{Plan: "p2", Digest: "sha256:plan", User: "bob"}, magosv1.Approval{Plan: "p2", User: "carol"})
	notes = RecordApprovals(p, entries, t2)
	require.Len(t, notes, 1, "only the new approver (carol's entry names no digest: it approves nothing)")
	assert.Contains(t, notes[0].Message, "approved by bob")
	assert.Equal(t, magosv1.PlanApproval{User: "bob", Time: metav1.NewTime(t2)}, p.Approvals[1], "at the time first seen")
	assert.Len(t, p.Approvals, 2)
	assert.Equal(t, metav1.NewTime(t1), p.Approvals[0].Time, "alice's approval keeps its time")
	assert.Empty(t, RecordApprovals(p, entries, t2), "nothing new")
}

func TestReviewPlan(t *testing.T) {
	p := &magosv1.PlanStatus{ID: "p2", Digest: "sha256:plan"}
	entries := []magosv1.Approval{
		{Plan: "p2", Digest: "sha256:plan", User: "alice", Groups: []string{"platform-admins"}},
		{Plan: "p2", Digest: "sha256:plan", User: "bob", Groups: []string{"developers"}},
		{Plan: "p1", Digest: "sha256:plan", User: "carol", Groups: []string{"platform-admins"}},
	}
	two := int32(2)
	for _, tt := range []struct {
		name         string
		rule         *magosv1.ApprovalRule
		approvedPlan string
		want         Review
		satisfied    bool
	}{
		{"no rule: one approval", nil, "", Review{Needed: 1, Counted: []string{"alice", "bob"}}, true},
		{"no rule, with entries: spec.approvedPlan is not one more", nil, "p2", Review{Needed: 1, Counted: []string{"alice", "bob"}}, true},
		{"auto", &magosv1.ApprovalRule{Name: "additions", AutoApprove: true}, "", Review{Rule: "additions", Auto: true, Needed: 1, Counted: []string{"alice", "bob"}}, true},
		{"two from a group: only alice counts", &magosv1.ApprovalRule{Name: "deletions", Approvals: &two, Groups: []string{"platform-admins"}}, "p2",
			Review{Rule: "deletions", Needed: 2, Groups: []string{"platform-admins"}, Counted: []string{"alice"}, Ignored: []string{"bob"}}, false},
		{"two from anyone", &magosv1.ApprovalRule{Name: "changes", Approvals: &two}, "", Review{Rule: "changes", Needed: 2, Counted: []string{"alice", "bob"}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ReviewPlan(tt.rule, p, entries, tt.approvedPlan, time.Now(), 0)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.satisfied, got.Satisfied())
		})
	}
}

func TestReviewPlanExpiresApprovals(t *testing.T) {
	seen := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	p := &magosv1.PlanStatus{ID: "p2", Digest: "sha256:plan", Approvals: []magosv1.PlanApproval{
		{User: "alice", Time: metav1.NewTime(seen)},
		{User: "bob", Time: metav1.NewTime(seen.Add(30 * time.Minute))},
	}}
	entries := []magosv1.Approval{{Plan: "p2", Digest: "sha256:plan", User: "alice"}, {Plan: "p2", Digest: "sha256:plan", User: "bob"}, {Plan: "p2", Digest: "sha256:plan", User: "carol"}}
	two := int32(2)
	rule := &magosv1.ApprovalRule{Name: "two", Approvals: &two}

	got := ReviewPlan(rule, p, entries, "", seen.Add(50*time.Minute), time.Hour)
	assert.Equal(t, []string{"alice", "bob", "carol"}, got.Counted, "carol's is not recorded yet: it counts from when it is")
	assert.Equal(t, seen.Add(time.Hour), *got.Expires, "alice's expires first")

	got = ReviewPlan(rule, p, entries, "", seen.Add(70*time.Minute), time.Hour)
	assert.Equal(t, []string{"alice"}, got.Expired)
	assert.Equal(t, []string{"bob", "carol"}, got.Counted)
	assert.True(t, got.Satisfied())

	got = ReviewPlan(rule, p, entries[:2], "", seen.Add(70*time.Minute), time.Hour)
	assert.False(t, got.Satisfied(), "bob's alone is not enough")
	assert.Equal(t, []string{"alice"}, got.Expired)

	got = ReviewPlan(rule, p, entries, "", seen.Add(100*time.Hour), 0)
	assert.Empty(t, got.Expired, "no maximum age: approvals do not expire")
	assert.Nil(t, got.Expires)
}
