package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/metrics/metricstest"
)

// fixedSeries is a lister that reads nothing and returns series.
func fixedSeries(series ...metrics.ObjectSeries) metrics.ObjectLister {
	return func(context.Context, client.Reader) ([]metrics.ObjectSeries, error) { return series, nil }
}

// TestObjectSeriesFollowTheCache: a scrape exports what the sources list
// now, and nothing of an object or a source that is gone.
func TestObjectSeriesFollowTheCache(t *testing.T) {
	const ns = "objects-test"
	applied, planned := time.Unix(1700000000, 0), time.Unix(1700000600, 0)
	ready := []metav1.Condition{{Type: magosv1.ReadyCondition, Status: metav1.ConditionFalse}, {Type: magosv1.StalledCondition, Status: metav1.ConditionTrue}}
	web := metrics.ObjectSeries{Kind: magosv1.WorkspaceKind, Namespace: ns, Name: "web", Conditions: ready,
		Info:      metrics.ResourceInfo{Phase: "ObjectsTestWaiting", Revision: "main@sha1:1"},
		Workspace: &metrics.WorkspaceState{Drifted: true, LastApplied: applied, Awaiting: "AwaitingApproval", AwaitingSince: planned, LockHeld: true}}
	db := metrics.ObjectSeries{Kind: magosv1.WorkspaceKind, Namespace: ns, Name: "db", Info: metrics.ResourceInfo{Phase: "ObjectsTestIdle"}, Workspace: &metrics.WorkspaceState{}}
	release := metrics.ObjectSeries{Kind: magosv1.RolloutKind, Namespace: ns, Name: "release", Halted: true, Info: metrics.ResourceInfo{Suspended: true}}

	// The aggregates count every source's objects (other tests add some):
	// compare with what they were before.
	locksBefore, haltedBefore := gaugeOr0(t, "magos_workspace_state_locks_held"), gaugeOr0(t, "magos_rollouts_halted")
	removeWorkspaces := metrics.AddObjectSource(magosv1.WorkspaceKind, fixedSeries(web, db), nil)
	removeRollouts := metrics.AddObjectSource(magosv1.RolloutKind, fixedSeries(release), nil)

	assert.Equal(t, 1.0, value(t, "magos_resource_info", map[string]string{"kind": "Workspace", "namespace": ns, "name": "web",
		"ready": "False", "stalled": "true", "suspended": "false", "phase": "ObjectsTestWaiting", "revision": "main@sha1:1"}))
	assert.Equal(t, 1.0, value(t, "magos_resource_info", map[string]string{"kind": "Workspace", "name": "db", "ready": "Unknown", "stalled": "false"}))
	assert.Equal(t, 1.0, value(t, "magos_resource_info", map[string]string{"kind": "Rollout", "name": "release", "suspended": "true"}))
	assert.Equal(t, 1.0, value(t, "magos_workspaces", map[string]string{"phase": "ObjectsTestWaiting"}))
	assert.Equal(t, 1.0, value(t, "magos_workspaces", map[string]string{"phase": "ObjectsTestIdle"}))
	assert.Equal(t, locksBefore+1, value(t, "magos_workspace_state_locks_held", nil))
	assert.Equal(t, 1.0, value(t, "magos_workspace_drifted", map[string]string{"name": "web"}))
	assert.Equal(t, 1.0, value(t, "magos_workspace_state_lock_held", map[string]string{"name": "web"}))
	assert.Equal(t, float64(applied.Unix()), value(t, "magos_workspace_last_applied_timestamp_seconds", map[string]string{"name": "web"}))
	assert.Equal(t, float64(planned.Unix()), value(t, "magos_workspace_awaiting_since_timestamp_seconds", map[string]string{"name": "web", "reason": "AwaitingApproval"}))
	assert.Equal(t, haltedBefore+1, value(t, "magos_rollouts_halted", nil))
	assert.Equal(t, 0, count(t, "magos_workspace_drifted", map[string]string{"name": "db"}), "no series for what does not hold")
	assert.Equal(t, 0, count(t, "magos_workspace_last_applied_timestamp_seconds", map[string]string{"name": "db"}))

	removeWorkspaces()
	removeRollouts()
	assert.Equal(t, 0, count(t, "magos_resource_info", map[string]string{"namespace": ns}), "a source that is gone exports nothing")
	assert.Equal(t, 0, count(t, "magos_workspaces", map[string]string{"phase": "ObjectsTestIdle"}), "nor its counts")
	assert.Equal(t, locksBefore, gaugeOr0(t, "magos_workspace_state_locks_held"))
	assert.Equal(t, haltedBefore, gaugeOr0(t, "magos_rollouts_halted"))
}

// TestObjectSeriesOnlyFromTheElectedManager: a manager's cache is read
// only while the manager leads.
func TestObjectSeriesOnlyFromTheElectedManager(t *testing.T) {
	r := metrics.ObjectSource(magosv1.WorkspaceKind, fixedSeries(metrics.ObjectSeries{Kind: magosv1.WorkspaceKind, Namespace: "elected-test", Name: "ws", Workspace: &metrics.WorkspaceState{}}), nil)
	elected, ok := r.(interface{ NeedLeaderElection() bool })
	require.True(t, ok)
	assert.True(t, elected.NeedLeaderElection())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Start(ctx) }()
	assert.Eventually(t, func() bool {
		return count(t, "magos_resource_info", map[string]string{"namespace": "elected-test"}) == 1
	}, 5*time.Second, 10*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, 0, count(t, "magos_resource_info", map[string]string{"namespace": "elected-test"}), "gone once the manager stops leading")
}

// gaugeOr0 is the value of the series of name, 0 without one.
func gaugeOr0(t *testing.T, name string) float64 {
	t.Helper()
	_, v := metricstest.Sum(t, name, nil)
	return v
}

// count is the number of gathered series of name whose labels include match.
func count(t *testing.T, name string, match map[string]string) int {
	t.Helper()
	n, _ := metricstest.Sum(t, name, match)
	return n
}

// value is the value of the one gathered series of name whose labels
// include match.
func value(t *testing.T, name string, match map[string]string) float64 {
	t.Helper()
	n, v := metricstest.Sum(t, name, match)
	require.Equal(t, 1, n, "%s%v", name, match)
	return v
}
