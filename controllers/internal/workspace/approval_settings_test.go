package workspace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/approvalrules"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// TestApprovalSettingsKeepTheProjectsFloor pins how a Workspace's
// approval settings are layered over its Project's: the Project's Manual
// and approval rules are a floor (the Workspace's rules are reviewed with
// the Project's, not instead of them), and the shorter approvalMaxAge
// counts.
func TestApprovalSettingsKeepTheProjectsFloor(t *testing.T) {
	prod := []magosv1.ApprovalRule{{Name: "prod", Approvals: new(int32(2))}}
	auto := []magosv1.ApprovalRule{{Name: "everything", AutoApprove: true}}
	hour, day := &metav1.Duration{Duration: time.Hour}, &metav1.Duration{Duration: 24 * time.Hour}
	for _, tt := range []struct {
		name       string
		ws         magosv1.WorkspaceSpec
		project    *magosv1.ProjectDefaults
		approval   magosv1.ApprovalMode
		maxAge     time.Duration
		own, floor string // the first rule's name of each set, "" for none
	}{
		{name: "no Project: the Workspace's own", ws: magosv1.WorkspaceSpec{Approval: magosv1.ApprovalManual, ApprovalRules: auto, ApprovalMaxAge: day},
			approval: magosv1.ApprovalManual, maxAge: 24 * time.Hour, own: "everything"},
		{name: "the Project's rules for a Workspace without rules", ws: magosv1.WorkspaceSpec{Approval: magosv1.ApprovalManual},
			project: &magosv1.ProjectDefaults{ApprovalRules: prod}, approval: magosv1.ApprovalManual, own: "prod"},
		{name: "the Workspace's rules do not replace the Project's", ws: magosv1.WorkspaceSpec{Approval: magosv1.ApprovalManual, ApprovalRules: auto},
			project: &magosv1.ProjectDefaults{ApprovalRules: prod}, approval: magosv1.ApprovalManual, own: "everything", floor: "prod"},
		{name: "approval Auto does not escape the Project's rules", ws: magosv1.WorkspaceSpec{Approval: magosv1.ApprovalAuto, ApprovalRules: auto},
			project: &magosv1.ProjectDefaults{ApprovalRules: prod}, approval: magosv1.ApprovalManual, own: "everything", floor: "prod"},
		{name: "nor the Project's Manual", ws: magosv1.WorkspaceSpec{Approval: magosv1.ApprovalAuto},
			project: &magosv1.ProjectDefaults{Approval: magosv1.ApprovalManual}, approval: magosv1.ApprovalManual},
		{name: "an Auto Project lets the Workspace choose", ws: magosv1.WorkspaceSpec{Approval: magosv1.ApprovalManual},
			project: &magosv1.ProjectDefaults{Approval: magosv1.ApprovalAuto}, approval: magosv1.ApprovalManual},
		{name: "a Workspace cannot make approvals outlive its Project's maximum", ws: magosv1.WorkspaceSpec{Approval: magosv1.ApprovalManual, ApprovalMaxAge: day},
			project: &magosv1.ProjectDefaults{ApprovalMaxAge: hour}, approval: magosv1.ApprovalManual, maxAge: time.Hour},
		{name: "but may shorten it", ws: magosv1.WorkspaceSpec{Approval: magosv1.ApprovalManual, ApprovalMaxAge: hour},
			project: &magosv1.ProjectDefaults{ApprovalMaxAge: day}, approval: magosv1.ApprovalManual, maxAge: time.Hour},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "ws", Namespace: "team-a"}, Spec: tt.ws}
			var in inputs
			if tt.project != nil {
				ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "platform"}
				in.Project = &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "platform"}, Status: magosv1.ProjectStatus{Defaults: tt.project}}
			}
			s, err := settingsOf(runnerTestReconciler(), ws, in)
			require.NoError(t, err)
			assert.Equal(t, tt.approval, s.Approval)
			assert.Equal(t, tt.maxAge, s.ApprovalMaxAge)
			assert.Equal(t, tt.own, firstRule(t, s.ApprovalRules))
			assert.Equal(t, tt.floor, firstRule(t, s.FloorRules))
		})
	}

	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "ws"}, Spec: magosv1.WorkspaceSpec{ApprovalRules: auto, ProjectRef: &magosv1.LocalObjectReference{Name: "platform"}}}
	bad := &magosv1.Project{Status: magosv1.ProjectStatus{Defaults: &magosv1.ProjectDefaults{ApprovalRules: []magosv1.ApprovalRule{{Name: "broken", When: "plan.add >"}}}}}
	_, err := settingsOf(runnerTestReconciler(), ws, inputs{Project: bad})
	require.Error(t, err, "the Project's rules are compiled even where the Workspace has its own")
	e, ok := rerror.As(err)
	require.True(t, ok)
	assert.True(t, e.Stalling)
	assert.Equal(t, magosv1.ReasonInvalidApprovalRule, e.Reason)
	assert.Contains(t, err.Error(), "the Project's defaults.approvalRules[0] (broken).when")
}

// firstRule is the name of the rule governing every plan of rs (each rule
// above has no `when`), "" without rules.
func firstRule(t *testing.T, rs *approvalrules.Rules) string {
	t.Helper()
	if rs == nil {
		return ""
	}
	rule, err := rs.Govern(approvalrules.Plan{})
	require.NoError(t, err)
	if rule == nil {
		return ""
	}
	return rule.Name
}
