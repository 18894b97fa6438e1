package ops

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestRevisionApplied(t *testing.T) {
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "hello", Generation: 2}}
	done, err := RevisionApplied(ws, SourceRevision)
	assert.False(t, done, "no source seen yet")
	assert.NoError(t, err)

	ws.Status.Source = &magosv1.SourceStatus{Revision: "r2"}
	ws.Status.LastApplied = &magosv1.AppliedStatus{Revision: "r1"}
	done, _ = RevisionApplied(ws, SourceRevision)
	assert.False(t, done, "r1 applied, r2 is the source")
	done, _ = RevisionApplied(ws, "r1")
	assert.True(t, done, "an explicit revision")

	ws.Status.Conditions = []metav1.Condition{{Type: magosv1.StalledCondition, Status: metav1.ConditionTrue, Reason: "PathNotFound", ObservedGeneration: 1}}
	_, err = RevisionApplied(ws, SourceRevision)
	assert.NoError(t, err, "a Stalled condition of an older generation does not fail the wait")
	ws.Status.Conditions[0].ObservedGeneration = 2
	_, err = RevisionApplied(ws, SourceRevision)
	assert.ErrorContains(t, err, "stalled (PathNotFound)")
}
