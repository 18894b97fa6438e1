package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// hogRuns is how many hanging plans one namespace starts: as many as the
// controller has slots by default (--max-concurrent-runs).
const hogRuns = 20

// TestOneNamespaceCannotHoldEveryRunSlot: with the controller's default
// bounds, a namespace whose 20 plans hang holds only its own share of the
// run slots (half of them: --max-concurrent-runs-per-namespace), the rest
// of its plans waiting on its namespace's bound; a Workspace of another
// namespace created after them still gets a slot at once and applies.
func TestOneNamespaceCannotHoldEveryRunSlot(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	hog := env.NewNamespace(t)
	// The executor runs the Jobs of the stack's namespace only: the hog's
	// plans start and never end.
	s := newStackWith(t, stackOptions{AlsoWatch: []string{hog}})
	s.gitRepositoryIn(hog, "infra", copyConfig(t, "hello"))
	for i := range hogRuns {
		require.NoError(t, env.Client.Create(ctx, &magosv1.Workspace{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("hang-%02d", i), Namespace: hog},
			Spec:       magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"}},
		}))
	}
	var started, queued int
	require.Eventually(t, func() bool {
		started, queued = hogState(t, hog)
		return started+queued == hogRuns
	}, 2*time.Minute, 250*time.Millisecond, "every hanging plan started or queued")
	assert.Equal(t, hogRuns/2, started, "the namespace holds half of the slots")

	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("neighbour", "infra", nil)
	ws := s.waitWorkspace("neighbour", time.Minute, "started its plan or queued it", func(ws *magosv1.Workspace) bool {
		return ws.Status.CurrentRun != nil || ws.Status.LastRun() != nil || ws.Status.Phase == magosv1.PhaseWaiting
	})
	require.NotEqual(t, magosv1.PhaseWaiting, ws.Status.Phase, "the neighbour's plan is not queued behind the hanging ones: %s", readyMessage(ws))
	s.waitWorkspace("neighbour", 3*time.Minute, "applies", appliedRevision(rev))

	started, queued = hogState(t, hog)
	assert.Equal(t, hogRuns/2, started, "the hanging plans still hold their slots")
	assert.Equal(t, hogRuns/2, queued)
}

// hogState counts the Workspaces of ns with an unfinished plan Job, and
// those queued on the namespace's bound.
func hogState(t *testing.T, ns string) (started, queued int) {
	t.Helper()
	ctx := context.Background()
	var jobs batchv1.JobList
	require.NoError(t, env.Client.List(ctx, &jobs, client.InNamespace(ns), client.HasLabels{magosv1.WorkspaceLabel}))
	for i := range jobs.Items {
		if !finished(&jobs.Items[i]) {
			started++
		}
	}
	var list magosv1.WorkspaceList
	require.NoError(t, env.Client.List(ctx, &list, client.InNamespace(ns)))
	for i := range list.Items {
		ws := &list.Items[i]
		ready := meta.FindStatusCondition(ws.Status.Conditions, magosv1.ReadyCondition)
		if ready != nil && ready.Reason == magosv1.ReasonQueued && strings.Contains(ready.Message, "(--max-concurrent-runs-per-namespace)") {
			queued++
		}
	}
	return started, queued
}

// finished says whether job completed or failed.
func finished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// TestNamespacePlanRate: each plan rewrites its Workspace's plan Secrets,
// so a namespace starts at most --max-plans-per-namespace-per-minute plans
// per window. A plan over the rate waits without a Job, saying why, and
// runs once the window lets it; another namespace plans meanwhile.
func TestNamespacePlanRate(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	other := env.NewNamespace(t)
	s := newStackWith(t, stackOptions{AlsoWatch: []string{other}, Workspace: func(o *config.Options) {
		o.MaxPlansPerNamespacePerMinute = 2
		o.PlanRateWindow = 30 * time.Second
	}})
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	names := []string{"one", "two", "three"}
	for _, name := range names {
		s.newWorkspace(name, "infra", nil)
	}
	var waiting string
	require.Eventually(t, func() bool {
		planned := 0
		for _, name := range names {
			if planJobs(t, s.ns, name) > 0 {
				planned++
			} else if ws := s.workspace(name); ws.Status.Phase == magosv1.PhaseWaiting &&
				strings.Contains(readyMessage(ws), "--max-plans-per-namespace-per-minute") {
				waiting = name
			}
		}
		return planned == 2 && waiting != ""
	}, time.Minute, 250*time.Millisecond, "two plans start, the third waits for the rate")
	ws := s.workspace(waiting)
	assert.Equal(t, magosv1.ReasonQueued, meta.FindStatusCondition(ws.Status.Conditions, magosv1.ReadyCondition).Reason)
	assert.Contains(t, readyMessage(ws), "started 2 plans in the last 30s")

	// Another namespace has its own rate.
	s.gitRepositoryIn(other, "infra", copyConfig(t, "hello"))
	require.NoError(t, env.Client.Create(ctx, &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: "elsewhere", Namespace: other},
		Spec:       magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"}},
	}))
	require.Eventually(t, func() bool { return planJobs(t, other, "elsewhere") > 0 }, 30*time.Second, 250*time.Millisecond,
		"a Workspace of another namespace plans at once")

	for _, name := range names {
		s.waitWorkspace(name, 3*time.Minute, "applies, the third once the window lets it plan", appliedRevision(rev))
	}
}
