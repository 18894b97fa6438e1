package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// TestApprovalRules: a Workspace with approval Manual and two rules. A
// plan that only adds is applied without an approval (rule additions,
// autoApprove). A plan that deletes needs two approvals from members of
// platform-admins (rule deletions): status says what is missing, an
// approval by someone outside the group does not count, the second
// member's approval applies it. A rule whose CEL does not compile stalls
// the Workspace, naming the rule.
func TestApprovalRules(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	dir := t.TempDir()
	write := func(names ...string) {
		var b strings.Builder
		for _, n := range names {
			b.WriteString(`resource "terraform_data" "` + n + `" { input = "` + n + `" }` + "\n")
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(b.String()), 0o600))
	}
	write("a", "b")
	rev1 := s.gitRepository("infra", dir)
	s.newWorkspace("ruled", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Approval = magosv1.ApprovalManual
		ws.Spec.ApprovalRules = []magosv1.ApprovalRule{
			{Name: "additions", When: "plan.destroy == 0 && plan.change == 0", AutoApprove: true},
			{Name: "deletions", When: "plan.destroy > 0", Approvals: ptr.To(int32(2)), Groups: []string{"platform-admins"}},
		}
	})
	ws := s.waitWorkspace("ruled", 3*time.Minute, "applies the additions without an approval", appliedRevision(rev1))
	assert.True(t, ws.Status.Plan.AutoApproved)
	assert.Equal(t, "additions", ws.Status.Plan.ApprovalRule)
	assert.Empty(t, ws.Status.Plan.Approvals)
	requireEvent(t, s.ns, "ruled", magosv1.ReasonAutoApproved)
	assert.Contains(t, eventMessage(t, s.ns, "ruled", magosv1.ReasonAutoApproved), "approval rule additions governs it")

	write("a")
	rev2 := s.publish("infra", dir)
	awaiting := func(missing string) *magosv1.Workspace {
		return s.waitWorkspace("ruled", 3*time.Minute, "awaits approvals: "+missing, func(ws *magosv1.Workspace) bool {
			c := conditions.Get(ws, magosv1.ReadyCondition)
			return ws.Status.Phase == magosv1.PhaseAwaitingApproval && c != nil && strings.Contains(c.Message, missing)
		})
	}
	ws = awaiting("0 of 2 approvals (rule deletions), from members of platform-admins")
	plan := ws.Status.Plan
	assert.Equal(t, int32(1), plan.Destroy)
	assert.Equal(t, "deletions", plan.ApprovalRule)
	assert.False(t, plan.AutoApproved)

	approveAs := func(user string, groups ...string) {
		patchWorkspace(t, s.ns, "ruled", func(ws *magosv1.Workspace) {
			ws.Spec.Approvals = append(ws.Spec.Approvals, magosv1.Approval{Plan: plan.ID, Digest: plan.Digest, User: user, Groups: groups})
		})
	}
	approveAs("alice", "platform-admins")
	approveAs("bob", "developers")
	awaiting("1 of 2 approvals (rule deletions), from members of platform-admins (not counted: bob, in none of them)")
	approveAs("carol", "sre", "platform-admins")
	ws = s.waitWorkspace("ruled", 3*time.Minute, "applies once two members approved", appliedRevision(rev2))
	var approvers []string
	for _, a := range ws.Status.Plan.Approvals {
		approvers = append(approvers, a.User)
	}
	assert.ElementsMatch(t, []string{"alice", "bob", "carol"}, approvers, "status records every approval")
	assert.Equal(t, 1, applyJobs(t, s.ns, "ruled")-1, "one apply Job for the deletion")

	patchWorkspace(t, s.ns, "ruled", func(ws *magosv1.Workspace) { ws.Spec.ApprovalRules[0].When = "plan.destroy >" })
	ws = s.waitWorkspace("ruled", time.Minute, "stalls on the rule that does not compile", stalledWith(magosv1.ReasonInvalidApprovalRule))
	assert.Contains(t, conditions.Get(ws, magosv1.StalledCondition).Message, "spec.approvalRules[0] (additions).when: ")
}

// TestApprovalRulesOverResources: a rule reads the resources a plan
// changes (plan.resources, from the stored plan JSON): a plan that changes
// the resource named protected needs two approvals; any other applies on
// its own.
func TestApprovalRulesOverResources(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	dir := t.TempDir()
	write := func(names ...string) {
		var b strings.Builder
		for _, n := range names {
			b.WriteString(`resource "terraform_data" "` + n + `" { input = "` + n + `" }` + "\n")
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"), []byte(b.String()), 0o600))
	}
	write("a")
	rev1 := s.gitRepository("infra", dir)
	s.newWorkspace("ruled", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Approval = magosv1.ApprovalManual
		ws.Spec.ApprovalRules = []magosv1.ApprovalRule{
			{Name: "protected", When: "plan.resources.exists(r, r.type == 'terraform_data' && r.name == 'protected')", Approvals: ptr.To(int32(2))},
			{Name: "rest", AutoApprove: true},
		}
	})
	ws := s.waitWorkspace("ruled", 3*time.Minute, "applies a plan that leaves protected alone", appliedRevision(rev1))
	assert.Equal(t, "rest", ws.Status.Plan.ApprovalRule)

	write("a", "protected")
	rev2 := s.publish("infra", dir)
	ws = s.waitWorkspace("ruled", 3*time.Minute, "asks two approvals for a plan that changes protected", func(ws *magosv1.Workspace) bool {
		c := conditions.Get(ws, magosv1.ReadyCondition)
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval && c != nil && strings.Contains(c.Message, "0 of 2 approvals (rule protected)")
	})
	plan := ws.Status.Plan
	patchWorkspace(t, s.ns, "ruled", func(ws *magosv1.Workspace) {
		ws.Spec.Approvals = []magosv1.Approval{{Plan: plan.ID, Digest: plan.Digest, User: "alice"}, {Plan: plan.ID, Digest: plan.Digest, User: "bob"}}
	})
	s.waitWorkspace("ruled", 3*time.Minute, "applies once two approved", appliedRevision(rev2))
}

// TestApprovalsExpire: with spec.approvalMaxAge, an approval stops
// counting that long after the controller first saw it. A plan needing two
// approvals that got one: once that one is older than the maximum age, the
// Workspace plans again (ApprovalExpired) and the old approval approves
// nothing of the new plan; two approvals of the new plan apply it.
func TestApprovalsExpire(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("expiring", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Approval = magosv1.ApprovalManual
		ws.Spec.ApprovalMaxAge = &metav1.Duration{Duration: 5 * time.Second}
		ws.Spec.ApprovalRules = []magosv1.ApprovalRule{{Name: "two", Approvals: ptr.To(int32(2))}}
	})
	ws := s.waitWorkspace("expiring", 3*time.Minute, "awaits approvals", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	first := ws.Status.Plan
	approve := func(plan *magosv1.PlanStatus, users ...string) {
		patchWorkspace(t, s.ns, "expiring", func(ws *magosv1.Workspace) {
			for _, u := range users {
				ws.Spec.Approvals = append(ws.Spec.Approvals, magosv1.Approval{Plan: plan.ID, Digest: plan.Digest, User: u})
			}
		})
	}
	approve(first, "alice")
	ws = s.waitWorkspace("expiring", time.Minute, "plans again once alice's approval expired", func(ws *magosv1.Workspace) bool {
		return ws.Status.Plan != nil && ws.Status.Plan.ID != first.ID && ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	requireEvent(t, s.ns, "expiring", magosv1.ReasonApprovalExpired)
	assert.Contains(t, eventMessage(t, s.ns, "expiring", magosv1.ReasonApprovalExpired), "The approval of plan "+first.ID+" by alice is older than 5s")
	assert.Empty(t, ws.Status.Plan.Approvals, "the new plan has no approval")
	assert.Zero(t, applyJobs(t, s.ns, "expiring"))

	approve(ws.Status.Plan, "alice", "bob")
	s.waitWorkspace("expiring", 3*time.Minute, "applies the new plan, approved twice", appliedRevision(rev))
}
