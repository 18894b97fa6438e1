package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestObjectSeriesKeepsOneSeriesPerObject(t *testing.T) {
	vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "test_object_info", Help: "test"}, []string{"name", "state"})
	s := newObjectSeries(vec)
	expect := func(want string) {
		t.Helper()
		require.NoError(t, testutil.CollectAndCompare(vec, strings.NewReader("# HELP test_object_info test\n# TYPE test_object_info gauge\n"+want)))
	}

	s.set("a", 1, "a", "new")
	s.set("b", 1, "b", "new")
	s.set("a", 1, "a", "ready")
	expect("test_object_info{name=\"a\",state=\"ready\"} 1\ntest_object_info{name=\"b\",state=\"new\"} 1\n")

	s.set("a", 2, "a", "ready")
	expect("test_object_info{name=\"a\",state=\"ready\"} 2\ntest_object_info{name=\"b\",state=\"new\"} 1\n")

	s.forget("b")
	s.forget("never-seen")
	expect("test_object_info{name=\"a\",state=\"ready\"} 2\n")

	s.forget("a")
	assert.Equal(t, 0, testutil.CollectAndCount(vec))
}

func TestTrackResourceReplacesAndForgets(t *testing.T) {
	const ns = "resource-test"
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	count := func() int { return testutil.CollectAndCount(resourceInfo) }
	before := count()
	series := func(ready, stalled, suspended, phase, revision string) float64 {
		return testutil.ToFloat64(resourceInfo.WithLabelValues("Workspace", ns, "web", ready, stalled, suspended, phase, revision))
	}

	TrackResource("Workspace", ws, ResourceInfo{Phase: "Planning"})
	assert.Equal(t, before+1, count())
	assert.Equal(t, 1.0, series("Unknown", "false", "false", "Planning", ""), "no Ready condition yet")

	ws.Status.Conditions = []metav1.Condition{
		{Type: magosv1.ReadyCondition, Status: metav1.ConditionFalse},
		{Type: magosv1.StalledCondition, Status: metav1.ConditionTrue},
	}
	TrackResource("Workspace", ws, ResourceInfo{Suspended: true, Phase: "Failed", Revision: "main@sha1:1"})
	assert.Equal(t, before+1, count(), "the old label set is deleted")
	assert.Equal(t, 1.0, series("False", "true", "true", "Failed", "main@sha1:1"))

	TrackResource("Rollout", &magosv1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}, ResourceInfo{})
	assert.Equal(t, before+2, count(), "kinds do not share series")

	ForgetResource("Workspace", ns, "web")
	ForgetResource("Rollout", ns, "web")
	assert.Equal(t, before, count())
}

func TestTrackWorkspaceStateRemovesWhatNoLongerHolds(t *testing.T) {
	const ns = "state-test"
	applied, planned := time.Unix(1700000000, 500_000_000), time.Unix(1700000100, 0)
	TrackWorkspaceState(ns, "web", WorkspaceState{Drifted: true, LastApplied: applied, Awaiting: "AwaitingApproval", AwaitingSince: planned, LockHeld: true})
	assert.Equal(t, 1.0, testutil.ToFloat64(workspaceDrifted.WithLabelValues(ns, "web")))
	assert.Equal(t, 1.0, testutil.ToFloat64(workspaceStateLockHeld.WithLabelValues(ns, "web")))
	assert.Equal(t, 1700000000.5, testutil.ToFloat64(workspaceLastApplied.WithLabelValues(ns, "web")))
	assert.Equal(t, 1700000100.0, testutil.ToFloat64(workspaceAwaitingSince.WithLabelValues(ns, "web", "AwaitingApproval")))

	TrackWorkspaceState(ns, "web", WorkspaceState{LastApplied: applied, Awaiting: "AwaitingPromotion", AwaitingSince: planned})
	assert.False(t, workspaceDrifted.DeleteLabelValues(ns, "web"), "no drifted series once the condition is gone")
	assert.False(t, workspaceStateLockHeld.DeleteLabelValues(ns, "web"), "no lock series once the lock is released")
	assert.False(t, workspaceAwaitingSince.DeleteLabelValues(ns, "web", "AwaitingApproval"), "the old reason's series is deleted")
	assert.Equal(t, 1700000100.0, testutil.ToFloat64(workspaceAwaitingSince.WithLabelValues(ns, "web", "AwaitingPromotion")))

	TrackWorkspaceState(ns, "web", WorkspaceState{})
	assert.False(t, workspaceLastApplied.DeleteLabelValues(ns, "web"))
	assert.False(t, workspaceAwaitingSince.DeleteLabelValues(ns, "web", "AwaitingPromotion"))
}
