package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

const workspaceSetSA = "system:serviceaccount:magos-system:magos-workspaceset-controller"

// TestReviewPlanCountsEachApproverOnce: "two distinct approvers" are two
// people. spec.approvedPlan, which names no one, counts as one approval
// at most, and not next to a named approval (it may be the same
// person's); an entry without the plan's digest approves nothing.
func TestReviewPlanCountsEachApproverOnce(t *testing.T) {
	p := &magosv1.PlanStatus{ID: "p2", Digest: "sha256:plan"}
	alice := magosv1.Approval{Plan: "p2", Digest: "sha256:plan", User: "alice"}
	bob := magosv1.Approval{Plan: "p2", Digest: "sha256:plan", User: "bob"}
	two := &magosv1.ApprovalRule{Name: "two", Approvals: new(int32(2))}
	for _, tt := range []struct {
		name         string
		rule         *magosv1.ApprovalRule
		entries      []magosv1.Approval
		approvedPlan string
		counted      []string
		satisfied    bool
	}{
		{"spec.approvedPlan alone is one approval", nil, nil, "p2", []string{"spec.approvedPlan"}, true},
		{"spec.approvedPlan alone is not two", two, nil, "p2", []string{"spec.approvedPlan"}, false},
		{"spec.approvedPlan and alice are not two approvers", two, []magosv1.Approval{alice}, "p2", []string{"alice"}, false},
		{"alice and bob are two", two, []magosv1.Approval{alice, bob}, "p2", []string{"alice", "bob"}, true},
		{"alice twice is one", two, []magosv1.Approval{alice, alice}, "", []string{"alice"}, false},
		{"an entry without a digest approves nothing", nil, []magosv1.Approval{{Plan: "p2", User: "alice"}}, "", nil, false},
		{"an entry with another digest approves nothing", nil, []magosv1.Approval{{Plan: "p2", Digest: "sha256:other", User: "alice"}}, "", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ReviewPlan(tt.rule, p, tt.entries, tt.approvedPlan, time.Now(), 0)
			assert.Equal(t, tt.counted, got.Counted)
			assert.Equal(t, tt.satisfied, got.Satisfied())
		})
	}
}

// TestReviewPlanLeavesServiceAccountsOut: an approval written as a
// ServiceAccount (a controller writing Workspaces from a WorkspaceSet or
// from Git, a CI job) is no person's: it counts only under a rule naming
// that ServiceAccount.
func TestReviewPlanLeavesServiceAccountsOut(t *testing.T) {
	p := &magosv1.PlanStatus{ID: "p2", Digest: "sha256:plan"}
	entry := func(user string, groups ...string) magosv1.Approval {
		return magosv1.Approval{Plan: "p2", Digest: "sha256:plan", User: user, Groups: groups}
	}
	ci := "system:serviceaccount:ci:release"
	for _, tt := range []struct {
		name           string
		rule           *magosv1.ApprovalRule
		entries        []magosv1.Approval
		counted, left  []string
		satisfied      bool
		missingMessage string
	}{
		{name: "no rule: a controller's approval approves nothing", entries: []magosv1.Approval{entry(workspaceSetSA)},
			left: []string{workspaceSetSA}, missingMessage: "0 of 1 approvals (not counted: " + workspaceSetSA + ", a ServiceAccount no rule names)"},
		{name: "two approvers: alice and a controller are one", rule: &magosv1.ApprovalRule{Name: "two", Approvals: new(int32(2))},
			entries: []magosv1.Approval{entry("alice"), entry(workspaceSetSA)}, counted: []string{"alice"}, left: []string{workspaceSetSA}},
		{name: "a ServiceAccount's groups do not let it in", rule: &magosv1.ApprovalRule{Name: "sas", Groups: []string{"system:serviceaccounts"}},
			entries: []magosv1.Approval{entry(ci, "system:serviceaccounts")}, left: []string{ci}},
		{name: "a rule naming the ServiceAccount counts it", rule: &magosv1.ApprovalRule{Name: "ci", ServiceAccounts: []string{"ci/release"}},
			entries: []magosv1.Approval{entry(ci)}, counted: []string{ci}, satisfied: true},
		{name: "only the ServiceAccount it names", rule: &magosv1.ApprovalRule{Name: "ci", ServiceAccounts: []string{"ci/release"}},
			entries: []magosv1.Approval{entry(workspaceSetSA), entry("system:serviceaccount:ci:release-2")}, left: []string{workspaceSetSA, "system:serviceaccount:ci:release-2"}},
		{name: "named, it still needs the rule's groups", rule: &magosv1.ApprovalRule{Name: "ci", ServiceAccounts: []string{"ci/release"}, Groups: []string{"platform-admins"}},
			entries: []magosv1.Approval{entry(ci, "system:serviceaccounts")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ReviewPlan(tt.rule, p, tt.entries, "", time.Now(), 0)
			assert.Equal(t, tt.counted, got.Counted)
			assert.Equal(t, tt.left, got.ServiceAccounts)
			assert.Equal(t, tt.satisfied, got.Satisfied())
			if tt.missingMessage != "" {
				assert.Equal(t, tt.missingMessage, got.missing())
			}
		})
	}
}

// TestProjectRulesAreAFloor: where a Workspace and its Project both have
// approval rules, a plan needs what both ask; the Workspace's rules cannot
// lower the Project's.
func TestProjectRulesAreAFloor(t *testing.T) {
	p := &magosv1.PlanStatus{ID: "p2", Digest: "sha256:plan"}
	entry := func(user string, groups ...string) magosv1.Approval {
		return magosv1.Approval{Plan: "p2", Digest: "sha256:plan", User: user, Groups: groups}
	}
	auto := &magosv1.ApprovalRule{Name: "everything", AutoApprove: true}
	twoAdmins := &magosv1.ApprovalRule{Name: "prod", Approvals: new(int32(2)), Groups: []string{"platform-admins"}}
	for _, tt := range []struct {
		name          string
		own, floor    *magosv1.ApprovalRule
		entries       []magosv1.Approval
		satisfied     bool
		auto          bool
		rule, missing string
	}{
		{name: "the Workspace's autoApprove does not lift the Project's two approvals", own: auto, floor: twoAdmins,
			rule: "everything, prod (Project)", missing: "0 of 2 approvals (the Project's rule prod), from members of platform-admins"},
		{name: "the Project's rule holds with the Workspace's", own: auto, floor: twoAdmins,
			entries: []magosv1.Approval{entry("alice", "platform-admins"), entry("carol", "platform-admins")}, satisfied: true, rule: "everything, prod (Project)"},
		{name: "a plan no Project rule governs needs one approval", own: auto, floor: nil,
			rule: "everything", missing: "0 of 1 approvals (the Project's rules)"},
		{name: "both autoApprove: applied without approval", own: auto, floor: &magosv1.ApprovalRule{Name: "additions", AutoApprove: true},
			satisfied: true, auto: true, rule: "everything, additions (Project)"},
		{name: "both must pass: the Workspace's rule is missing one", own: &magosv1.ApprovalRule{Name: "sre", Groups: []string{"sre"}}, floor: twoAdmins,
			entries: []magosv1.Approval{entry("alice", "platform-admins"), entry("carol", "platform-admins")}, rule: "sre, prod (Project)",
			missing: "0 of 1 approvals (rule sre), from members of sre (not counted: alice, carol, in none of them)"},
		{name: "both must pass: both are", own: &magosv1.ApprovalRule{Name: "sre", Groups: []string{"sre"}}, floor: twoAdmins,
			entries: []magosv1.Approval{entry("alice", "platform-admins", "sre"), entry("carol", "platform-admins")}, satisfied: true, rule: "sre, prod (Project)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Now()
			got := ReviewPlan(tt.own, p, tt.entries, "", now, 0).WithFloor(ReviewPlan(tt.floor, p, tt.entries, "", now, 0))
			assert.Equal(t, tt.satisfied, got.Satisfied())
			assert.Equal(t, tt.auto, got.AutoApproved())
			assert.Equal(t, tt.rule, got.RuleNames())
			if tt.missing != "" {
				assert.Equal(t, tt.missing, got.missing())
			}
		})
	}
}

// TestProjectApprovalFloor: a Project whose defaults say Manual or name
// approval rules makes its Workspaces Manual whatever they say, and its
// approvalMaxAge is the longest an approval of its Workspaces counts.
func TestProjectApprovalFloor(t *testing.T) {
	rules := []magosv1.ApprovalRule{{Name: "prod", Approvals: new(int32(2))}}
	for _, tt := range []struct {
		name      string
		workspace magosv1.ApprovalMode
		project   *magosv1.ProjectDefaults
		want      magosv1.ApprovalMode
	}{
		{"no Project: the Workspace's", magosv1.ApprovalAuto, nil, magosv1.ApprovalAuto},
		{"no Project, unset: Auto", "", nil, magosv1.ApprovalAuto},
		{"the Project's default", "", &magosv1.ProjectDefaults{Approval: magosv1.ApprovalManual}, magosv1.ApprovalManual},
		{"the Project's Manual is a floor", magosv1.ApprovalAuto, &magosv1.ProjectDefaults{Approval: magosv1.ApprovalManual}, magosv1.ApprovalManual},
		{"the Project's rules are a floor", magosv1.ApprovalAuto, &magosv1.ProjectDefaults{ApprovalRules: rules}, magosv1.ApprovalManual},
		{"the Project's rules, unset approval", "", &magosv1.ProjectDefaults{Approval: magosv1.ApprovalAuto, ApprovalRules: rules}, magosv1.ApprovalManual},
		{"the Workspace may raise an Auto Project", magosv1.ApprovalManual, &magosv1.ProjectDefaults{Approval: magosv1.ApprovalAuto}, magosv1.ApprovalManual},
		{"the Workspace may say Auto in an Auto Project", magosv1.ApprovalAuto, &magosv1.ProjectDefaults{Approval: magosv1.ApprovalAuto}, magosv1.ApprovalAuto},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, EffectiveApproval(tt.workspace, tt.project))
		})
	}

	h, d := time.Hour, 24*time.Hour
	for _, tt := range []struct {
		name               string
		workspace, project time.Duration
		want               time.Duration
	}{
		{"neither: for ever", 0, 0, 0},
		{"the Workspace's", h, 0, h},
		{"the Project's", 0, d, d},
		{"the Workspace's shorter", h, d, h},
		{"not longer than the Project's", d, h, h},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, EffectiveApprovalMaxAge(tt.workspace, tt.project))
		})
	}
}
