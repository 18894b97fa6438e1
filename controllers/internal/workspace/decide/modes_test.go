package decide

import (
	"testing"

	"github.com/stretchr/testify/assert"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestNextApply pins status.plan.nextApply: what applying the plan would
// do in each mode.
func TestNextApply(t *testing.T) {
	changes := &magosv1.PlanStatus{ID: "p", HasChanges: true, Add: 1, Change: 2, Destroy: 3}
	with := func(mut func(*magosv1.PlanStatus)) *magosv1.PlanStatus {
		p := *changes
		mut(&p)
		return &p
	}
	tests := []struct {
		name    string
		plan    *magosv1.PlanStatus
		mode    magosv1.WorkspaceMode
		applied *magosv1.AppliedStatus
		want    string
	}{
		{"a plan with changes", changes, "", nil, "apply +1 ~2 -3"},
		{"an applied plan", changes, magosv1.ModeApply, &magosv1.AppliedStatus{PlanID: "p"}, "none"},
		{"a plan without changes", with(func(p *magosv1.PlanStatus) { p.HasChanges = false }), magosv1.ModeApply, nil, "none"},
		{"plan-only", changes, magosv1.ModePlanOnly, nil, "none (plan-only; plan +1 ~2 -3)"},
		{"a destroy plan", with(func(p *magosv1.PlanStatus) { p.Mode = magosv1.PlanModeDestroy }), magosv1.ModeDestroy, nil, "destroy -3"},
		{"a targeted plan", with(func(p *magosv1.PlanStatus) {
			p.Request = &magosv1.PlanRequest{ID: "r", Targets: []string{"terraform_data.a"}, Replace: []string{"terraform_data.b"}}
		}), magosv1.ModeApply, nil, "targeted apply +1 ~2 -3 (-target terraform_data.a -replace terraform_data.b)"},
		{"a replace", with(func(p *magosv1.PlanStatus) {
			p.Request = &magosv1.PlanRequest{ID: "r", Replace: []string{"terraform_data.b"}}
		}),
			magosv1.ModeApply, nil, "apply +1 ~2 -3 (-replace terraform_data.b)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, nextApply(tt.plan, tt.mode, tt.applied))
		})
	}
}
