package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
)

func awaiting(id string) *magosv1.Workspace {
	return &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Status: magosv1.WorkspaceStatus{Phase: magosv1.PhaseAwaitingApproval,
			Plan: &magosv1.PlanStatus{ID: id, Digest: "sha256:" + id, HasChanges: true, Add: 1, Policy: &magosv1.PolicyVerdict{Passed: true}}},
	}
}

func TestApprovable(t *testing.T) {
	id, err := Approvable(awaiting("p2"), PlanRef{})
	require.NoError(t, err)
	assert.Equal(t, "p2", id)

	id, err = Approvable(awaiting("p2"), PlanRef{ID: "p2"})
	require.NoError(t, err)
	assert.Equal(t, "p2", id)

	_, err = Approvable(awaiting("p2"), PlanRef{ID: "p1"})
	require.Error(t, err)
	assert.Equal(t, failure.ExitFailure, failure.ExitCode(err))
	assert.Contains(t, err.Error(), "the current plan is p2, not p1", "the refusal names both plans")

	applied := awaiting("p2")
	applied.Status.Phase = magosv1.PhaseIdle
	applied.Status.LastApplied = &magosv1.AppliedStatus{PlanID: "p2"}
	_, err = Approvable(applied, PlanRef{})
	assert.ErrorContains(t, err, "no plan awaiting approval (phase Idle)")

	denied := awaiting("p3")
	denied.Status.Plan.Policy = &magosv1.PolicyVerdict{Message: "1 violation"}
	_, err = Approvable(denied, PlanRef{})
	assert.ErrorContains(t, err, "failed the policy gate")
}

// TestApprovableOnlyTheComparedPlan: approve --stage approves exactly the
// plan it compared, by ID and digest: a plan replaced between the
// comparison and the write, even under the same ID, is refused.
func TestApprovableOnlyTheComparedPlan(t *testing.T) {
	compared := PlanRef{ID: "p2", Digest: "sha256:p2"}
	id, err := Approvable(awaiting("p2"), compared)
	require.NoError(t, err)
	assert.Equal(t, "p2", id)

	_, err = Approvable(awaiting("p3"), compared)
	assert.ErrorContains(t, err, "the current plan is p3, not p2")

	restored := awaiting("p2")
	restored.Status.Plan.Digest = "sha256:other"
	_, err = Approvable(restored, compared)
	require.Error(t, err)
	assert.Equal(t, failure.ExitFailure, failure.ExitCode(err))
	assert.Contains(t, err.Error(), "its digest is sha256:other, not the sha256:p2 compared")

	undigested := awaiting("p2")
	undigested.Status.Plan.Digest = ""
	_, err = Approvable(undigested, PlanRef{ID: "p2"})
	assert.ErrorContains(t, err, "has no digest yet", "an approval always names a digest")
}

// TestGroupByChange: the stage's plans are grouped by the digest of the
// whole change, each member keeping the plan it was compared on.
func TestGroupByChange(t *testing.T) {
	a := StagePlan{Name: "prod-a", Plan: PlanRef{"p1", "sha256:1"}, Change: "sha256:x"}
	b := StagePlan{Name: "prod-b", Plan: PlanRef{"p2", "sha256:2"}, Change: "sha256:x"}
	c := StagePlan{Name: "prod-c", Plan: PlanRef{"p3", "sha256:3"}, Change: "sha256:y"}
	d := StagePlan{Name: "prod-d", Plan: PlanRef{"p4", "sha256:4"}, Change: "sha256:x"}
	assert.Equal(t, [][]StagePlan{{a, b, d}, {c}}, groupByChange([]StagePlan{a, b, c, d}))
	assert.Nil(t, groupByChange(nil))
}

func TestApprovedApplied(t *testing.T) {
	ws := awaiting("p2")
	done, err := ApprovedApplied(ws, "p2")
	assert.False(t, done)
	assert.NoError(t, err, "waiting")

	ws.Status.History = []magosv1.RunStatus{{Phase: magosv1.RunApply, PlanID: "p2", Result: magosv1.ResultFailed, Reason: "ApplyFailed", Message: "boom"}}
	_, err = ApprovedApplied(ws, "p2")
	assert.ErrorContains(t, err, "the apply of plan p2 failed (ApplyFailed): boom")

	ws = awaiting("p3")
	_, err = ApprovedApplied(ws, "p2")
	assert.ErrorContains(t, err, "replaced by plan p3")

	ws.Status.LastApplied = &magosv1.AppliedStatus{PlanID: "p2"}
	done, err = ApprovedApplied(ws, "p2")
	assert.True(t, done)
	assert.NoError(t, err)
}
