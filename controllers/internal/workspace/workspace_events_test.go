package workspace_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// eventCounts counts the events (events.k8s.io/v1) regarding Workspace ws
// by reason. The event recorder folds repeats of a reason into one Event's
// series, so a series counts as its length.
func eventCounts(t testing.TB, ns, ws string) map[string]int {
	t.Helper()
	var list eventsv1.EventList
	require.NoError(t, env.Client.List(context.Background(), &list, client.InNamespace(ns)))
	counts := map[string]int{}
	for _, e := range list.Items {
		if e.Regarding.Kind != magosv1.WorkspaceKind || e.Regarding.Name != ws {
			continue
		}
		n := 1
		if e.Series != nil {
			n = int(e.Series.Count)
		}
		counts[e.Reason] += n
	}
	return counts
}

// Every outcome emits its event once, and a run's start none: reconciles
// that find nothing new
// (here caused by annotation changes) emit nothing, whether the Workspace
// is applied, awaits approval or is stalled.
func TestEventsAreEmittedOncePerTransition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// drive takes the Workspace to a settled state.
		drive func(t *testing.T, f *fixture)
		// fast lets the controller take the fast path.
		fast bool
		want map[string]int
	}{
		{
			name: "applied",
			drive: func(t *testing.T, f *fixture) {
				f.newWorkspace("events", nil)
				complete(t, waitJob(t, f.ns, "events", magosv1.RunPlan), planWithChanges)
				complete(t, waitJob(t, f.ns, "events", magosv1.RunApply), magosv1.RunResult{})
				f.waitWorkspace("events", "is applied", inPhase(magosv1.PhaseIdle))
			},
			want: map[string]int{magosv1.ReasonPlanned: 1, magosv1.ReasonApplied: 1},
		},
		{
			name: "awaiting approval",
			drive: func(t *testing.T, f *fixture) {
				f.newWorkspace("events", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
				complete(t, waitJob(t, f.ns, "events", magosv1.RunPlan), planWithChanges)
				f.waitWorkspace("events", "awaits approval", inPhase(magosv1.PhaseAwaitingApproval))
			},
			want: map[string]int{magosv1.ReasonPlanned: 1, magosv1.ReasonAwaitingApproval: 1},
		},
		{
			name: "stalled",
			drive: func(t *testing.T, f *fixture) {
				f.newWorkspace("events", nil)
				report(t, waitJob(t, f.ns, "events", magosv1.RunPlan), magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonPathNotFound, Message: "no such path"})
				f.waitWorkspace("events", "stalls", inPhase(magosv1.PhaseFailed))
			},
			want: map[string]int{magosv1.ReasonRunFailed: 1},
		},
		{
			name: "applied on the fast path",
			drive: func(t *testing.T, f *fixture) {
				f.newWorkspace("events", nil)
				complete(t, waitJob(t, f.ns, "events", magosv1.RunPlanApply), planWithChanges)
				f.waitWorkspace("events", "is applied", inPhase(magosv1.PhaseIdle))
			},
			fast: true,
			want: map[string]int{magosv1.ReasonApplied: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var tune func(*config.Options)
			if tt.fast {
				tune = fastPath
			}
			f := newTunedFixture(t, time.Second, tune)
			tt.drive(t, f)
			require.Eventually(t, func() bool { return assert.ObjectsAreEqual(tt.want, eventCounts(t, f.ns, "events")) },
				10*time.Second, 100*time.Millisecond, "the transitions' events are recorded")

			for i := range 3 {
				f.update("events", func(ws *magosv1.Workspace) { ws.Annotations = map[string]string{"example.com/touched": fmt.Sprint(i)} })
			}
			assert.Never(t, func() bool { return !assert.ObjectsAreEqual(tt.want, eventCounts(t, f.ns, "events")) },
				3*time.Second, 100*time.Millisecond, "no event is repeated")
			assert.Equal(t, tt.want, eventCounts(t, f.ns, "events"))
		})
	}
}
