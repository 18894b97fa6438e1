package workspace_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/workspace"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// reasonRecorder counts the events a reconciler records, by reason.
type reasonRecorder struct {
	mu     sync.Mutex
	counts map[string]int
}

func (r *reasonRecorder) Eventf(_, _ runtime.Object, _, reason, _, _ string, _ ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts[reason]++
}

func (r *reasonRecorder) count(reason string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[reason]
}

// A reconcile whose status patch is lost is repeated, and the repeat sees
// the same transition: its event is still recorded once, and status ends
// up describing the run as if the patch had not been lost. A reconciler
// reading through a lagging cache loses such patches in normal operation.
func TestLostStatusPatchRepeatsNoEventAndLosesNoRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		finish func(t testing.TB, job *batchv1.Job)
		check  func(t *testing.T, ws *magosv1.Workspace, events *reasonRecorder)
	}{
		{
			name:   "a plan with changes, then its apply started",
			finish: func(t testing.TB, job *batchv1.Job) { complete(t, job, planWithChanges) },
			check: func(t *testing.T, ws *magosv1.Workspace, events *reasonRecorder) {
				assert.Equal(t, 1, events.count(magosv1.ReasonPlanned), "one Planned event for one plan")
				require.NotNil(t, ws.Status.CurrentRun)
				assert.Equal(t, magosv1.RunApply, ws.Status.CurrentRun.Phase, "the apply that started is the current run")
				require.NotNil(t, ws.Status.Plan, "status.plan shows the plan being applied")
				assert.Equal(t, ws.Status.CurrentRun.PlanID, ws.Status.Plan.ID)
				assert.Len(t, ws.Status.History, 1, "the plan run is in the history")
			},
		},
		{
			name: "a failed run",
			finish: func(t testing.TB, job *batchv1.Job) {
				report(t, job, magosv1.RunResult{Result: magosv1.ResultFailed, Reason: magosv1.ReasonInitFailed})
			},
			check: func(t *testing.T, ws *magosv1.Workspace, events *reasonRecorder) {
				assert.Equal(t, 1, events.count(magosv1.ReasonRunFailed), "one RunFailed event for one failed run")
				assert.Len(t, ws.Status.History, 1, "the run is in the history once")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, time.Hour)
			f.stopController()
			opts := f.options()
			engine := policy.NewEngineClient(opts.PolicyEnginePath)
			t.Cleanup(func() { _ = engine.Close() })
			c := &testenv.ConflictingClient{Client: env.Client}
			events := &reasonRecorder{counts: map[string]int{}}
			r := &workspace.Reconciler{Client: c, APIReader: env.Client, Events: events, Options: opts, Policies: engine}
			reconcile := func() error {
				_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: f.ns, Name: "lost"}})
				return err
			}

			f.newWorkspace("lost", nil)
			require.NoError(t, reconcile(), "starts the plan")
			tt.finish(t, waitJob(t, f.ns, "lost", magosv1.RunPlan))
			c.Conflicts.Store(1)
			require.True(t, apierrors.IsConflict(reconcile()), "the status patch that records the run is lost")
			require.NoError(t, reconcile(), "the reconcile is repeated")
			tt.check(t, f.get("lost"), events)
		})
	}
}
