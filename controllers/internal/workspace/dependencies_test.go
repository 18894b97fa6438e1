package workspace

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestFindCycle: a path back to the Workspace is found and named; a
// diamond or a missing Workspace is no cycle.
func TestFindCycle(t *testing.T) {
	graph := func(edges map[string][]string) func(string) (*magosv1.Workspace, error) {
		return func(name string) (*magosv1.Workspace, error) {
			deps, ok := edges[name]
			if !ok {
				return nil, nil
			}
			ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}
			for _, d := range deps {
				ws.Spec.DependsOn = append(ws.Spec.DependsOn, magosv1.LocalObjectReference{Name: d})
			}
			return ws, nil
		}
	}
	c, err := findCycle("app", graph(map[string][]string{"app": {"db"}, "db": {"net"}, "net": {"app"}}))
	require.NoError(t, err)
	assert.Equal(t, []string{"app", "db", "net", "app"}, c)

	c, err = findCycle("app", graph(map[string][]string{"app": {"db", "cache"}, "db": {"net"}, "cache": {"net"}, "net": {}}))
	require.NoError(t, err)
	assert.Nil(t, c, "a diamond is no cycle")

	c, err = findCycle("app", graph(map[string][]string{"app": {"gone"}, "x": {"x"}}))
	require.NoError(t, err)
	assert.Nil(t, c, "a missing dependency is no cycle (it waits)")

	c, err = findCycle("app", graph(map[string][]string{"app": {"db"}, "db": {"db"}}))
	require.NoError(t, err)
	assert.Nil(t, c, "a cycle that does not pass through the Workspace is the other Workspace's")
}

// TestDependencyState pins when a dependency counts as ready: Ready, with
// the current revision of its source applied (or plan-only).
func TestDependencyState(t *testing.T) {
	dep := func(mode magosv1.WorkspaceMode, ready metav1.ConditionStatus, applied string) *magosv1.Workspace {
		ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "network", Generation: 1}}
		ws.Spec.Mode = mode
		ws.Status.ObservedGeneration = 1
		ws.Status.Phase = magosv1.PhaseIdle
		ws.Status.Conditions = []metav1.Condition{{Type: magosv1.ReadyCondition, Status: ready, Message: "m"}}
		if applied != "" {
			ws.Status.LastApplied = &magosv1.AppliedStatus{Revision: applied}
		}
		return ws
	}
	for _, tc := range []struct {
		name     string
		dep      *magosv1.Workspace
		revision string
		ready    bool
		message  string
		shard    string
	}{
		{"missing", nil, "", false, "Workspace network does not exist", ""},
		{"missing in a shard: maybe in another", nil, "", false,
			"Workspace network does not exist or is not in this controller's shard (sharding.fluxcd.io/key=a); keep a Workspace and its dependencies in one shard (label sharding.fluxcd.io/key)",
			"sharding.fluxcd.io/key=a"},
		{"not Ready", dep("", metav1.ConditionFalse, "r1"), "r1", false, "Workspace network is Idle: m", ""},
		{"Ready at the source's revision", dep("", metav1.ConditionTrue, "r1"), "r1", true, "", ""},
		{"Ready, but its source moved on", dep("", metav1.ConditionTrue, "r1"), "r2", false, "Workspace network has not applied revision r2 of its source yet", ""},
		{"Ready, nothing applied", dep("", metav1.ConditionTrue, ""), "r1", false, "has not applied revision r1", ""},
		{"source without an artifact", dep("", metav1.ConditionTrue, "r1"), "", false, "source has no artifact", ""},
		{"plan-only: Ready is enough", dep(magosv1.ModePlanOnly, metav1.ConditionTrue, ""), "r2", true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shard, err := labels.Parse(tc.shard)
			require.NoError(t, err)
			if tc.shard == "" {
				shard = nil
			}
			st := dependencyState("network", tc.dep, tc.revision, shard)
			assert.Equal(t, tc.ready, st.Ready)
			assert.Contains(t, st.Message, tc.message)
		})
	}
}
