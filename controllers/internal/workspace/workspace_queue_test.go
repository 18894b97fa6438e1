package workspace_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// With --max-concurrent-runs=1 one run is in progress at a time: a second
// Workspace waits Queued (Ready=False, Reconciling) with no Job; a plan
// followed by its apply keeps the slot; a queued drift re-plan leaves its
// Workspace Ready; when the slot frees, a new Workspace's plan goes before
// a drift re-plan that waited longer; the queue depth is exported by
// priority.
func TestRunQueueBoundsRunsAndAdmitsByPriority(t *testing.T) {
	f := newTunedFixture(t, time.Minute, func(o *config.Options) { o.MaxConcurrentRuns, o.DriftJitter = 1, 0 })

	f.newWorkspace("drifter", func(ws *magosv1.Workspace) { ws.Spec.Interval = &metav1.Duration{Duration: 3 * time.Second} })
	complete(t, waitJob(t, f.ns, "drifter", magosv1.RunPlan), planWithoutChanges)
	f.waitWorkspace("drifter", "applied", inPhase(magosv1.PhaseIdle))

	f.newWorkspace("holder", nil)
	holderPlan := waitJob(t, f.ns, "holder", magosv1.RunPlan)
	ws := f.waitWorkspace("drifter", "its drift plan queued", func(ws *magosv1.Workspace) bool {
		return strings.Contains(readyMessage(ws), "drift plan is queued")
	})
	assertReadiness(t, ws, readiness{Ready: "True/" + magosv1.ReconciliationSucceededReason, Kstatus: status.CurrentStatus})

	f.newWorkspace("fresh", nil)
	ws = f.waitWorkspace("fresh", "queued", func(ws *magosv1.Workspace) bool { return ws.Status.Phase == magosv1.PhaseWaiting })
	assertReadiness(t, ws, readiness{Ready: "False/" + magosv1.ReasonQueued, Reconciling: "True/" + magosv1.ReasonQueued, Kstatus: status.InProgressStatus})
	assert.Contains(t, readyMessage(ws), "at most 1 runs at once (--max-concurrent-runs)")
	assert.Equal(t, map[string]float64{"urgent": 0, "normal": 1, "drift": 1}, queueDepth(t))
	assert.Equal(t, 1, unfinishedJobs(t, f.ns), "one run in progress")

	// The plan has changes: its apply follows in the same slot.
	complete(t, holderPlan, planWithChanges)
	holderApply := waitJob(t, f.ns, "holder", magosv1.RunApply)
	assert.Zero(t, len(runJobs(t, f.ns, "fresh"))+jobsIn(t, f.ns, "drifter", magosv1.RunPlan)-1, "nothing else started")
	assert.Equal(t, 1, unfinishedJobs(t, f.ns))

	complete(t, holderApply, magosv1.RunResult{})
	freshPlan := waitJob(t, f.ns, "fresh", magosv1.RunPlan)
	assert.Equal(t, 1, jobsIn(t, f.ns, "drifter", magosv1.RunPlan), "the drift re-plan waits behind the new plan although it waited longer")
	assert.Equal(t, 1, unfinishedJobs(t, f.ns))

	complete(t, freshPlan, planWithoutChanges)
	f.waitWorkspace("fresh", "applied", inPhase(magosv1.PhaseIdle))
	waitJob(t, f.ns, "drifter", magosv1.RunPlan)
	assert.Equal(t, 1, unfinishedJobs(t, f.ns))
}

// unfinishedJobs counts the run Jobs in ns that have not finished.
func unfinishedJobs(t *testing.T, ns string) int {
	t.Helper()
	var jobs batchv1.JobList
	require.NoError(t, env.Client.List(context.Background(), &jobs, client.InNamespace(ns), client.HasLabels{magosv1.WorkspaceLabel}))
	n := 0
	for i := range jobs.Items {
		if !jobDone(&jobs.Items[i]) {
			n++
		}
	}
	return n
}

// queueDepth reads magos_workspace_run_queue_depth by priority.
func queueDepth(t *testing.T) map[string]float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range families {
		if mf.GetName() != "magos_workspace_run_queue_depth" {
			continue
		}
		for _, m := range mf.GetMetric() {
			out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
		}
	}
	return out
}
