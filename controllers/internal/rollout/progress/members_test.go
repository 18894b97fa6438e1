package progress

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestMemberOf(t *testing.T) {
	ws := func(phase magosv1.WorkspacePhase, planned, applied string, conds ...metav1.Condition) *magosv1.Workspace {
		w := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: 2}}
		w.Status.ObservedGeneration, w.Status.Phase, w.Status.Conditions = 2, phase, conds
		if planned != "" {
			w.Status.Plan = &magosv1.PlanStatus{Revision: planned}
		}
		if applied != "" {
			w.Status.LastApplied = &magosv1.AppliedStatus{Revision: applied}
		}
		return w
	}
	cond := func(t string, s metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg}
	}
	readyTrue := cond(magosv1.ReadyCondition, metav1.ConditionTrue, "Succeeded", "")
	runFailed := cond(magosv1.ReadyCondition, metav1.ConditionFalse, "RunFailed", "apply failed")
	stalled := cond(magosv1.StalledCondition, metav1.ConditionTrue, "DuplicateVariable", "x twice")

	m := MemberOf(ws(magosv1.PhaseIdle, "r2", "r2", readyTrue), "r2")
	assert.True(t, m.done("r2"))
	assert.False(t, m.Failing)

	m = MemberOf(ws(magosv1.PhaseFailed, "r2", "r1", runFailed), "r2")
	assert.True(t, m.Failing, "a failed run of the revision")
	assert.Equal(t, "RunFailed: apply failed", m.Message)

	m = MemberOf(ws(magosv1.PhaseFailed, "r1", "r1", runFailed), "r2")
	assert.False(t, m.Failing, "a failure of an older revision is not this rollout's; the Workspace re-plans")

	m = MemberOf(ws(magosv1.PhaseFailed, "", "r1", stalled), "r2")
	assert.True(t, m.Failing, "a stalled Workspace halts its stage whatever it was doing")

	notObserved := ws(magosv1.PhaseIdle, "r2", "r2", readyTrue)
	notObserved.Generation = 3
	assert.False(t, MemberOf(notObserved, "r2").done("r2"), "Ready of an older generation does not count")
}
