package workspace_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// A Workspace that depends on another plans only once that one is Ready:
// meanwhile it is Waiting (Reconciling=True, DependencyNotReady, kstatus
// InProgress), starts no Job, and status.dependencies says what it waits
// for; the dependency becoming Ready wakes it.
func TestDependentWaitsForItsDependency(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Hour)
	f.newWorkspace("network", nil)
	f.newWorkspace("app", func(ws *magosv1.Workspace) {
		ws.Spec.DependsOn = []magosv1.LocalObjectReference{{Name: "network"}}
	})

	ws := f.waitWorkspace("app", "waits for network", inPhase(magosv1.PhaseWaiting))
	assertReadiness(t, ws, readiness{Ready: "False/" + magosv1.ReasonDependencyNotReady, Reconciling: "True/" + magosv1.ReasonDependencyNotReady, Kstatus: status.InProgressStatus})
	require.Len(t, ws.Status.Dependencies, 1)
	assert.Equal(t, "network", ws.Status.Dependencies[0].Name)
	assert.False(t, ws.Status.Dependencies[0].Ready)
	assert.Contains(t, readyMessage(ws), "Workspace network is")
	assert.Empty(t, runJobs(t, f.ns, "app"), "no run starts before the dependency is Ready")

	complete(t, waitJob(t, f.ns, "network", magosv1.RunPlan), planWithoutChanges)
	f.waitWorkspace("network", "is applied", inPhase(magosv1.PhaseIdle))
	waitJob(t, f.ns, "app", magosv1.RunPlan)
	ws = f.waitWorkspace("app", "plans", inPhase(magosv1.PhasePlanning))
	assert.True(t, ws.Status.Dependencies[0].Ready)
}

// Workspaces whose spec.dependsOn form a cycle stall and name it.
func TestDependencyCycleStalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Hour)
	f.newWorkspace("x", func(ws *magosv1.Workspace) { ws.Spec.DependsOn = []magosv1.LocalObjectReference{{Name: "y"}} })
	f.newWorkspace("y", func(ws *magosv1.Workspace) { ws.Spec.DependsOn = []magosv1.LocalObjectReference{{Name: "x"}} })
	ws := f.waitWorkspace("x", "stalls on the cycle", inPhase(magosv1.PhaseFailed))
	assertReadiness(t, ws, readiness{Ready: "False/" + magosv1.ReasonDependencyCycle, Stalled: "True/" + magosv1.ReasonDependencyCycle, Kstatus: status.FailedStatus})
	assert.Contains(t, readyMessage(ws), "x → y → x")
	assert.Empty(t, runJobs(t, f.ns, "x"))
	assert.Empty(t, runJobs(t, f.ns, "y"))
}
