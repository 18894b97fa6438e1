package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// driftWorkspace manages one file through the magostest provider, installed
// from the filesystem mirror, with a short drift interval.
func driftWorkspace(approval magosv1.ApprovalMode, root string) func(*magosv1.Workspace) {
	return func(ws *magosv1.Workspace) {
		ws.Spec.Approval = approval
		ws.Spec.Interval = &metav1.Duration{Duration: 2 * time.Second}
		ws.Spec.Vars = []magosv1.Variable{{Name: "root", Value: ptr.To(root)}}
	}
}

func TestWorkspaceDriftIsDetectedAndCorrected(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	root := t.TempDir()
	motd := filepath.Join(root, "motd.txt")
	rev := s.gitRepository("infra", copyConfig(t, "drift"))
	s.newWorkspace("drifty", "infra", driftWorkspace(magosv1.ApprovalAuto, root))
	s.waitWorkspace("drifty", 3*time.Minute, "applies", appliedRevision(rev))
	require.Equal(t, "hello from magos\n", readFile(t, motd), "the provider from the mirror wrote the file")

	require.NoError(t, os.WriteFile(motd, []byte("edited by hand\n"), 0o644))
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(motd)
		return err == nil && string(b) == "hello from magos\n"
	}, 3*time.Minute, 250*time.Millisecond, "the drift is corrected by an automatic apply")
	ws := s.waitWorkspace("drifty", time.Minute, "reports the corrected drift", func(ws *magosv1.Workspace) bool {
		c := conditions.Get(ws, magosv1.DriftedCondition)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == magosv1.ReasonApplied
	})
	assert.True(t, ws.Status.Plan.Drift)
	assert.True(t, recorded(t, s.ns, "drifty", magosv1.ReasonDriftDetected), "a DriftDetected event was recorded")
	assert.Contains(t, gatherMetrics(t), "magos_workspace_drift_detected_total")
}

func TestWorkspaceDriftWaitsForApprovalWhenManual(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	root := t.TempDir()
	motd := filepath.Join(root, "motd.txt")
	rev := s.gitRepository("infra", copyConfig(t, "drift"))
	s.newWorkspace("careful", "infra", driftWorkspace(magosv1.ApprovalManual, root))
	ws := s.waitWorkspace("careful", 3*time.Minute, "waits for approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	approve(t, s.ns, "careful", ws.Status.Plan.ID)
	s.waitWorkspace("careful", 3*time.Minute, "applies", appliedRevision(rev))

	require.NoError(t, os.WriteFile(motd, []byte("edited by hand\n"), 0o644))
	ws = s.waitWorkspace("careful", 3*time.Minute, "detects the drift", func(ws *magosv1.Workspace) bool {
		return conditions.IsTrue(ws, magosv1.DriftedCondition) && ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	assert.True(t, ws.Status.Plan.Drift && ws.Status.Plan.Change == 1, "the drift plan updates the file in place: %+v", ws.Status.Plan)
	assert.Equal(t, "edited by hand\n", readFile(t, motd), "nothing is corrected without approval")
}

// hasEvent reports whether an event with reason was recorded for the Workspace.
func hasEvent(t *testing.T, ns, name, reason string) bool {
	t.Helper()
	return workspaceEvent(t, ns, name, reason) != nil
}

// eventWait is how long a test waits for an event it expects: events are
// recorded after the status patch that explains them, so a test that saw
// the status may look before the event is written.
const eventWait = 10 * time.Second

// recorded reports whether an event with reason is recorded for the
// Workspace within eventWait.
func recorded(t *testing.T, ns, name, reason string) bool {
	t.Helper()
	return eventMessage(t, ns, name, reason) != "" || hasEvent(t, ns, name, reason)
}

// eventMessage is the note of the Workspace's event of reason, waiting up
// to eventWait for it ("" without one).
func eventMessage(t *testing.T, ns, name, reason string) string {
	t.Helper()
	for deadline := time.Now().Add(eventWait); ; time.Sleep(100 * time.Millisecond) {
		if e := workspaceEvent(t, ns, name, reason); e != nil {
			return e.Note
		}
		if time.Now().After(deadline) {
			return ""
		}
	}
}

// workspaceEvent is an event of reason recorded for the Workspace, or nil.
func workspaceEvent(t *testing.T, ns, name, reason string) *eventsv1.Event {
	t.Helper()
	var events eventsv1.EventList
	require.NoError(t, env.Client.List(context.Background(), &events, client.InNamespace(ns)))
	for i, e := range events.Items {
		if e.Regarding.Name == name && e.Reason == reason {
			return &events.Items[i]
		}
	}
	return nil
}

// TestDriftIntervalIsRaisedToTheMinimum: a Workspace cannot re-plan, and
// rewrite its plan Secrets, more often than --min-interval: its 2 s
// interval is raised, with a Warning event saying so, and no drift
// re-plan follows the apply within the asked interval many times over.
func TestDriftIntervalIsRaisedToTheMinimum(t *testing.T) {
	env.Require(t)
	s := newStackWith(t, stackOptions{Workspace: func(o *config.Options) { o.MinInterval = time.Hour }})
	rev := s.gitRepository("infra", copyConfig(t, "drift"))
	s.newWorkspace("eager", "infra", driftWorkspace(magosv1.ApprovalAuto, t.TempDir()))
	ws := s.waitWorkspace("eager", 3*time.Minute, "applies", appliedRevision(rev))
	require.Eventually(t, func() bool { return hasEvent(t, s.ns, "eager", magosv1.ReasonIntervalRaised) }, 30*time.Second, 250*time.Millisecond,
		"an IntervalRaised event says the interval was raised")
	require.Never(t, func() bool { return s.getWorkspace("eager").Status.Runs != ws.Status.Runs }, 10*time.Second, 250*time.Millisecond,
		"no drift re-plan comes every 2 s")
}
