package command

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func awaiting(id string) *magosv1.Workspace {
	return &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Status: magosv1.WorkspaceStatus{Phase: magosv1.PhaseAwaitingApproval,
			Plan: &magosv1.PlanStatus{ID: id, Digest: "sha256:" + id, HasChanges: true, Add: 1, Policy: &magosv1.PolicyVerdict{Passed: true}}},
	}
}

func TestApprovable(t *testing.T) {
	id, err := approvable(awaiting("p2"), planRef{})
	require.NoError(t, err)
	assert.Equal(t, "p2", id)

	id, err = approvable(awaiting("p2"), planRef{ID: "p2"})
	require.NoError(t, err)
	assert.Equal(t, "p2", id)

	_, err = approvable(awaiting("p2"), planRef{ID: "p1"})
	require.Error(t, err)
	assert.Equal(t, ExitFailure, exitCode(err))
	assert.Contains(t, err.Error(), "the current plan is p2, not p1", "the refusal names both plans")

	applied := awaiting("p2")
	applied.Status.Phase = magosv1.PhaseIdle
	applied.Status.LastApplied = &magosv1.AppliedStatus{PlanID: "p2"}
	_, err = approvable(applied, planRef{})
	assert.ErrorContains(t, err, "no plan awaiting approval (phase Idle)")

	denied := awaiting("p3")
	denied.Status.Plan.Policy = &magosv1.PolicyVerdict{Message: "1 violation"}
	_, err = approvable(denied, planRef{})
	assert.ErrorContains(t, err, "failed the policy gate")
}

// TestApprovableOnlyTheComparedPlan: approve --stage approves exactly the
// plan it compared, by ID and digest: a plan replaced between the
// comparison and the write, even under the same ID, is refused.
func TestApprovableOnlyTheComparedPlan(t *testing.T) {
	compared := planRef{ID: "p2", Digest: "sha256:p2"}
	id, err := approvable(awaiting("p2"), compared)
	require.NoError(t, err)
	assert.Equal(t, "p2", id)

	_, err = approvable(awaiting("p3"), compared)
	assert.ErrorContains(t, err, "the current plan is p3, not p2")

	restored := awaiting("p2")
	restored.Status.Plan.Digest = "sha256:other"
	_, err = approvable(restored, compared)
	require.Error(t, err)
	assert.Equal(t, ExitFailure, exitCode(err))
	assert.Contains(t, err.Error(), "its digest is sha256:other, not the sha256:p2 compared")

	undigested := awaiting("p2")
	undigested.Status.Plan.Digest = ""
	_, err = approvable(undigested, planRef{ID: "p2"})
	assert.ErrorContains(t, err, "has no digest yet", "an approval always names a digest")
}

// TestGroupByChange: the stage's plans are grouped by the digest of the
// whole change, each member keeping the plan it was compared on.
func TestGroupByChange(t *testing.T) {
	a := stagePlan{name: "prod-a", plan: planRef{"p1", "sha256:1"}, change: "sha256:x"}
	b := stagePlan{name: "prod-b", plan: planRef{"p2", "sha256:2"}, change: "sha256:x"}
	c := stagePlan{name: "prod-c", plan: planRef{"p3", "sha256:3"}, change: "sha256:y"}
	d := stagePlan{name: "prod-d", plan: planRef{"p4", "sha256:4"}, change: "sha256:x"}
	assert.Equal(t, [][]stagePlan{{a, b, d}, {c}}, groupByChange([]stagePlan{a, b, c, d}))
	assert.Nil(t, groupByChange(nil))
}

func TestApprovedApplied(t *testing.T) {
	ws := awaiting("p2")
	done, err := approvedApplied(ws, "p2")
	assert.False(t, done)
	assert.NoError(t, err, "waiting")

	ws.Status.History = []magosv1.RunStatus{{Phase: magosv1.RunApply, PlanID: "p2", Result: magosv1.ResultFailed, Reason: "ApplyFailed", Message: "boom"}}
	_, err = approvedApplied(ws, "p2")
	assert.ErrorContains(t, err, "the apply of plan p2 failed (ApplyFailed): boom")

	ws = awaiting("p3")
	_, err = approvedApplied(ws, "p2")
	assert.ErrorContains(t, err, "replaced by plan p3")

	ws.Status.LastApplied = &magosv1.AppliedStatus{PlanID: "p2"}
	done, err = approvedApplied(ws, "p2")
	assert.True(t, done)
	assert.NoError(t, err)
}

func TestRevisionApplied(t *testing.T) {
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "hello", Generation: 2}}
	done, err := revisionApplied(ws, sourceRevision)
	assert.False(t, done, "no source seen yet")
	assert.NoError(t, err)

	ws.Status.Source = &magosv1.SourceStatus{Revision: "r2"}
	ws.Status.LastApplied = &magosv1.AppliedStatus{Revision: "r1"}
	done, _ = revisionApplied(ws, sourceRevision)
	assert.False(t, done, "r1 applied, r2 is the source")
	done, _ = revisionApplied(ws, "r1")
	assert.True(t, done, "an explicit revision")

	ws.Status.Conditions = []metav1.Condition{{Type: magosv1.StalledCondition, Status: metav1.ConditionTrue, Reason: "PathNotFound", ObservedGeneration: 1}}
	_, err = revisionApplied(ws, sourceRevision)
	assert.NoError(t, err, "a Stalled condition of an older generation does not fail the wait")
	ws.Status.Conditions[0].ObservedGeneration = 2
	_, err = revisionApplied(ws, sourceRevision)
	assert.ErrorContains(t, err, "stalled (PathNotFound)")
}
