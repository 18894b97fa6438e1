package rollout

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

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
