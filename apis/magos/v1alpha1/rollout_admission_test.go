package v1alpha1_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// t0 is the tests' fixed now.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestGoverningIsTheOldestRolloutOfTheProject(t *testing.T) {
	at := func(name, project string, age time.Duration) magosv1.Rollout {
		return magosv1.Rollout{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(t0.Add(-age))},
			Spec:       magosv1.RolloutSpec{ProjectRef: magosv1.LocalObjectReference{Name: project}},
		}
	}
	list := []magosv1.Rollout{at("young", "p", time.Minute), at("other", "q", time.Hour), at("old", "p", 2*time.Minute), at("also-old", "p", 2*time.Minute)}
	require.NotNil(t, magosv1.GoverningRollout(list, "p"))
	assert.Equal(t, "also-old", magosv1.GoverningRollout(list, "p").Name, "same age: by name")
	assert.Nil(t, magosv1.GoverningRollout(list, "none"))
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
	assert.True(t, magosv1.RolloutAdmission(nil, ws("x", ""), "r2").Allowed, "no Rollout: no gate")
	assert.True(t, magosv1.RolloutAdmission(ro, ws("dev-a", "r1"), "r2").Allowed)

	d := magosv1.RolloutAdmission(ro, ws("dev-b", "r1"), "r2")
	assert.False(t, d.Allowed, "not among the admitted Workspaces")
	assert.Contains(t, d.Message, "free slot in stage dev")

	d = magosv1.RolloutAdmission(ro, ws("prod-a", "r1"), "r2")
	assert.False(t, d.Allowed)
	assert.Contains(t, d.Message, "stage prod of Rollout ro to admit revision r2")

	assert.True(t, magosv1.RolloutAdmission(ro, ws("prod-a", "r1"), "r1").Allowed, "re-applying the applied revision (drift correction)")

	d = magosv1.RolloutAdmission(ro, ws("stray", ""), "r2")
	assert.False(t, d.Allowed)
	assert.Contains(t, d.Message, "No stage of Rollout ro selects this Workspace")

	d = magosv1.RolloutAdmission(ro, ws("newcomer", ""), "r2")
	assert.False(t, d.Allowed, "a Workspace the Rollout has not placed yet waits")

	ro.Status.Stages[0].Phase, ro.Status.Stages[0].Message = magosv1.StageHalted, "Halted: Workspace dev-a failed"
	d = magosv1.RolloutAdmission(ro, ws("dev-b", "r1"), "r2")
	assert.False(t, d.Allowed)
	assert.Contains(t, d.Message, "halted")
}
