package rollout

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestGoverningIsTheOldestRolloutOfTheProject(t *testing.T) {
	at := func(name, project string, age time.Duration) magosv1.Rollout {
		return magosv1.Rollout{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age))},
			Spec:       magosv1.RolloutSpec{ProjectRef: magosv1.LocalObjectReference{Name: project}},
		}
	}
	list := []magosv1.Rollout{at("young", "p", time.Minute), at("other", "q", time.Hour), at("old", "p", 2*time.Minute), at("also-old", "p", 2*time.Minute)}
	require.NotNil(t, Governing(list, "p"))
	assert.Equal(t, "also-old", Governing(list, "p").Name, "same age: by name")
	assert.Nil(t, Governing(list, "none"))
}

func TestAdmission(t *testing.T) {
	ro := &magosv1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Name: "ro"},
		Spec:       magosv1.RolloutSpec{ProjectRef: magosv1.LocalObjectReference{Name: "p"}},
		Status: magosv1.RolloutStatus{
			Revision:           "r2",
			UnstagedWorkspaces: []string{"stray"},
			Stages: []magosv1.StageStatus{
				{Name: "dev", Phase: magosv1.StageProgressing, AdmittedRevision: "r2", AdmittedWorkspaces: []string{"dev-a"},
					Workspaces: []magosv1.StageWorkspace{{Name: "dev-a"}, {Name: "dev-b"}}},
				{Name: "prod", Phase: magosv1.StagePending, Message: "Waits for the previous stage",
					Workspaces: []magosv1.StageWorkspace{{Name: "prod-a"}}},
			},
		},
	}
	ws := func(name, applied string) *magosv1.Workspace {
		w := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if applied != "" {
			w.Status.LastApplied = &magosv1.AppliedStatus{Revision: applied}
		}
		return w
	}
	assert.True(t, Admission(nil, ws("x", ""), "r2").Allowed, "no Rollout: no gate")
	assert.True(t, Admission(ro, ws("dev-a", "r1"), "r2").Allowed)

	d := Admission(ro, ws("dev-b", "r1"), "r2")
	assert.False(t, d.Allowed, "not among the admitted Workspaces")
	assert.Contains(t, d.Message, "free slot in stage dev")

	d = Admission(ro, ws("prod-a", "r1"), "r2")
	assert.False(t, d.Allowed)
	assert.Contains(t, d.Message, "stage prod of Rollout ro to admit revision r2")

	assert.True(t, Admission(ro, ws("prod-a", "r1"), "r1").Allowed, "re-applying the applied revision (drift correction)")

	d = Admission(ro, ws("stray", ""), "r2")
	assert.False(t, d.Allowed)
	assert.Contains(t, d.Message, "No stage of Rollout ro selects this Workspace")

	d = Admission(ro, ws("newcomer", ""), "r2")
	assert.False(t, d.Allowed, "a Workspace the Rollout has not placed yet waits")

	ro.Status.Stages[0].Phase, ro.Status.Stages[0].Message = magosv1.StageHalted, "Halted: Workspace dev-a failed"
	d = Admission(ro, ws("dev-b", "r1"), "r2")
	assert.False(t, d.Allowed)
	assert.Contains(t, d.Message, "halted")
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
