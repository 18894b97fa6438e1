package rollout

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

	m := memberOf(ws(magosv1.PhaseIdle, "r2", "r2", readyTrue), "r2")
	assert.True(t, m.done("r2"))
	assert.False(t, m.Failing)

	m = memberOf(ws(magosv1.PhaseFailed, "r2", "r1", runFailed), "r2")
	assert.True(t, m.Failing, "a failed run of the revision")
	assert.Equal(t, "RunFailed: apply failed", m.Message)

	m = memberOf(ws(magosv1.PhaseFailed, "r1", "r1", runFailed), "r2")
	assert.False(t, m.Failing, "a failure of an older revision is not this rollout's; the Workspace re-plans")

	m = memberOf(ws(magosv1.PhaseFailed, "", "r1", stalled), "r2")
	assert.True(t, m.Failing, "a stalled Workspace halts its stage whatever it was doing")

	notObserved := ws(magosv1.PhaseIdle, "r2", "r2", readyTrue)
	notObserved.Generation = 3
	assert.False(t, memberOf(notObserved, "r2").done("r2"), "Ready of an older generation does not count")
}

func TestStageWorkspacesByFirstMatchingSelector(t *testing.T) {
	stages := []magosv1.Stage{
		{Name: "dev", Selector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "dev"}}},
		{Name: "all", Selector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpExists}}}},
	}
	mk := func(name string, labels map[string]string) magosv1.Workspace {
		return magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: labels},
			Spec: magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"}}}
	}
	got, err := stageWorkspaces(stages, []magosv1.Workspace{
		mk("b", map[string]string{"env": "dev"}), mk("a", map[string]string{"env": "prod"}),
		mk("c", map[string]string{"env": "dev"}), mk("d", nil),
	})
	require.NoError(t, err)
	names := func(wss []*magosv1.Workspace) (out []string) {
		for _, ws := range wss {
			out = append(out, ws.Name)
		}
		return out
	}
	assert.Equal(t, []string{"b", "c"}, names(got.Stages[0]))
	assert.Equal(t, []string{"a"}, names(got.Stages[1]), "a Workspace goes to the first stage that selects it")
	assert.Equal(t, []string{"d"}, got.Unstaged)
	assert.Equal(t, []string{"GitRepository/ns/infra"}, got.Sources)

	stages[0].Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Bogus"}}
	_, err = stageWorkspaces(stages, nil)
	assert.ErrorContains(t, err, "stage dev: invalid selector")
}
