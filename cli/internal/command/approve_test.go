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
			Plan: &magosv1.PlanStatus{ID: id, HasChanges: true, Add: 1, Policy: &magosv1.PolicyVerdict{Passed: true}}},
	}
}

func TestApprovable(t *testing.T) {
	id, err := approvable(awaiting("p2"), "")
	require.NoError(t, err)
	assert.Equal(t, "p2", id)

	id, err = approvable(awaiting("p2"), "p2")
	require.NoError(t, err)
	assert.Equal(t, "p2", id)

	_, err = approvable(awaiting("p2"), "p1")
	require.Error(t, err)
	assert.Equal(t, ExitFailure, exitCode(err))
	assert.Contains(t, err.Error(), "the current plan is p2, not p1", "the refusal names both plans")

	applied := awaiting("p2")
	applied.Status.Phase = magosv1.PhaseIdle
	applied.Status.LastApplied = &magosv1.AppliedStatus{PlanID: "p2"}
	_, err = approvable(applied, "")
	assert.ErrorContains(t, err, "no plan awaiting approval (phase Idle)")

	denied := awaiting("p3")
	denied.Status.Plan.Policy = &magosv1.PolicyVerdict{Message: "1 violation"}
	_, err = approvable(denied, "")
	assert.ErrorContains(t, err, "failed the policy gate")
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
