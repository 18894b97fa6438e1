package view

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestWorkspaceRow(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(-d)} }
	tests := []struct {
		name string
		ws   magosv1.Workspace
		want []string
	}{{
		name: "new Workspace",
		ws:   magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "fresh"}},
		want: []string{"fresh", "-", "-", "-", "-", "-", "-", "-"},
	}, {
		name: "awaiting approval of a denied plan with a lock",
		ws: magosv1.Workspace{
			ObjectMeta: metav1.ObjectMeta{Name: "hello"},
			Spec:       magosv1.WorkspaceSpec{Suspend: true},
			Status: magosv1.WorkspaceStatus{
				Phase:  magosv1.PhaseAwaitingApproval,
				Source: &magosv1.SourceStatus{Revision: "main@sha1:0123456789abcdef0123456789abcdef01234567"},
				Plan: &magosv1.PlanStatus{ID: "p1", Add: 2, Change: 1, Destroy: 3, Policy: &magosv1.PolicyVerdict{
					Violations: []magosv1.PolicyViolation{{Policy: "a"}, {Policy: "b"}}}},
				Lock:    &magosv1.LockStatus{Holder: "run-7"},
				History: []magosv1.RunStatus{{Phase: "plan", Result: "Succeeded", Started: ago(time.Hour), Finished: ago(5 * time.Minute)}},
				Conditions: []metav1.Condition{{Type: magosv1.ReadyCondition, Status: metav1.ConditionFalse,
					Message: "Plan p1 waits\nfor approval"}},
			},
		},
		want: []string{"hello", "AwaitingApproval (suspended)", "main@sha1:0123456789ab", "+2 ~1 -3", "Failed (2)", "run-7",
			"plan Succeeded 5m", "Plan p1 waits for approval"},
	}, {
		name: "a run in progress wins over history",
		ws: magosv1.Workspace{
			ObjectMeta: metav1.ObjectMeta{Name: "busy"},
			Status: magosv1.WorkspaceStatus{
				Phase:      magosv1.PhaseApplying,
				Plan:       &magosv1.PlanStatus{ID: "p2", Add: 1, Policy: &magosv1.PolicyVerdict{Passed: true}},
				CurrentRun: &magosv1.RunStatus{Phase: "apply", Started: ago(30 * time.Second)},
				History:    []magosv1.RunStatus{{Phase: "plan", Result: "Succeeded", Finished: ago(time.Minute)}},
			},
		},
		want: []string{"busy", "Applying", "-", "+1 ~0 -0", "Passed", "-", "apply Running 30s", "-"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, WorkspaceRow(&tt.ws, now))
		})
	}
}

func TestRolloutRowListsStagePhases(t *testing.T) {
	ro := &magosv1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Name: "release"},
		Spec:       magosv1.RolloutSpec{ProjectRef: magosv1.LocalObjectReference{Name: "app"}},
		Status: magosv1.RolloutStatus{Revision: "v1", Stages: []magosv1.StageStatus{
			{Name: "dev", Phase: magosv1.StageSucceeded}, {Name: "prod", Phase: magosv1.StageWaitingForPromotion}}},
	}
	assert.Equal(t, []string{"release", "app", "v1", "dev:Succeeded,prod:WaitingForPromotion", "-"}, RolloutRow(ro))
}

func TestShortRevision(t *testing.T) {
	assert.Equal(t, "main@sha1:0123456789ab", ShortRevision("main@sha1:0123456789abcdef0123456789abcdef01234567"))
	assert.Equal(t, "sha256:0123456789ab", ShortRevision("sha256:0123456789abcdef"))
	assert.Equal(t, "v1.2.3", ShortRevision("v1.2.3"))
	assert.Equal(t, "main@sha1:abc", ShortRevision("main@sha1:abc"))
}
