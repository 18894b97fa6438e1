package cli

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestWriteTree(t *testing.T) {
	member := func(name string, phase magosv1.WorkspacePhase, project string) magosv1.Workspace {
		return magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:   magosv1.WorkspaceSpec{ProjectRef: &magosv1.LocalObjectReference{Name: project}},
			Status: magosv1.WorkspaceStatus{Phase: phase, LastApplied: &magosv1.AppliedStatus{Revision: "r1"}}}
	}
	p := &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Status: magosv1.ProjectStatus{Workspaces: magosv1.WorkspaceRollup{Total: 3, Ready: 2}}}
	ro := magosv1.Rollout{ObjectMeta: metav1.ObjectMeta{Name: "release"},
		Spec: magosv1.RolloutSpec{ProjectRef: magosv1.LocalObjectReference{Name: "app"}},
		Status: magosv1.RolloutStatus{Revision: "r2", Stages: []magosv1.StageStatus{
			{Name: "dev", Phase: magosv1.StageSucceeded, AdmittedRevision: "r2", Workspaces: []magosv1.StageWorkspace{{Name: "dev-a"}}},
			{Name: "prod", Phase: magosv1.StageWaitingForPromotion, Workspaces: []magosv1.StageWorkspace{{Name: "prod-a"}}}}}}
	other := magosv1.Rollout{ObjectMeta: metav1.ObjectMeta{Name: "elsewhere"}, Spec: magosv1.RolloutSpec{ProjectRef: magosv1.LocalObjectReference{Name: "other"}}}
	var b bytes.Buffer
	writeTree(&b, p, []magosv1.Rollout{ro, other}, []magosv1.Workspace{
		member("prod-a", magosv1.PhaseAwaitingPromotion, "app"), member("dev-a", magosv1.PhaseIdle, "app"),
		member("loose", magosv1.PhaseIdle, "app"), member("foreign", magosv1.PhaseIdle, "other"),
	}, map[string]string{"release/prod": "1 Workspaces, 1 distinct plan (0 of 1 plans approved)"})
	assert.Equal(t, `Project app: 3 Workspaces, 2 ready, 0 failed: -
  Rollout release, revision r2: -
    Stage dev: Succeeded, admitted r2
      Workspace dev-a: Idle, applied r1: -
    Stage prod: WaitingForPromotion, admitted -; 1 Workspaces, 1 distinct plan (0 of 1 plans approved)
      Workspace prod-a: AwaitingPromotion, applied r1: -
  Workspaces outside any stage:
    Workspace loose: Idle, applied r1: -
`, b.String())
}

func TestRunOf(t *testing.T) {
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "hello"}, Status: magosv1.WorkspaceStatus{
		CurrentRun: &magosv1.RunStatus{Job: "now"},
		History:    []magosv1.RunStatus{{Job: "last"}, {Job: "before"}},
	}}
	r, err := runOf(ws, 0, false)
	assert.NoError(t, err)
	assert.Equal(t, "now", r.Job, "the run in progress by default")
	r, _ = runOf(ws, 1, true)
	assert.Equal(t, "before", r.Job)
	_, err = runOf(ws, 2, true)
	assert.Equal(t, ExitUsage, exitCode(err))
	assert.ErrorContains(t, err, "--run takes 0 to 1")
}
