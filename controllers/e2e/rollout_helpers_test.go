package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// rolloutFixture is a Project "app" whose Workspaces <stage>-a, <stage>-b…
// (labelled env=<stage>) read GitRepository "infra" (the release config)
// and are rolled out by Rollout "release".
type rolloutFixture struct {
	*stack
	dir     string
	stages  [][]string
	applies *applyLog
}

// envSelector selects the Workspaces labelled env=stage.
func envSelector(stage string) metav1.LabelSelector {
	return metav1.LabelSelector{MatchLabels: map[string]string{"env": stage}}
}

func newRolloutFixture(t testing.TB, perStage int, stages []magosv1.Stage, mutate func(*magosv1.Workspace)) *rolloutFixture {
	t.Helper()
	return newRolloutFixtureWith(t, perStage, stages, mutate, stackOptions{})
}

func newRolloutFixtureWith(t testing.TB, perStage int, stages []magosv1.Stage, mutate func(*magosv1.Workspace), opts stackOptions) *rolloutFixture {
	t.Helper()
	s := newStackWith(t, opts)
	f := &rolloutFixture{stack: s, dir: copyConfig(t, "release"), applies: watchApplies(t, s.ns)}
	ctx := context.Background()
	require.NoError(t, env.Client.Create(ctx, &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: s.ns}}))
	require.NoError(t, env.Client.Create(ctx, &magosv1.Rollout{
		ObjectMeta: metav1.ObjectMeta{Name: "release", Namespace: s.ns},
		Spec:       magosv1.RolloutSpec{ProjectRef: magosv1.LocalObjectReference{Name: "app"}, Stages: stages},
	}))
	s.gitRepository("infra", f.dir)
	for _, st := range stages {
		var names []string
		for i := range perStage {
			name := workspaceName(st.Name, i)
			names = append(names, name)
			s.newWorkspace(name, "infra", func(ws *magosv1.Workspace) {
				ws.Labels = map[string]string{"env": st.Name}
				ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "app"}
				ws.Spec.Vars = []magosv1.Variable{{Name: "stage", Value: ptr.To(st.Name)}}
				if mutate != nil {
					mutate(ws)
				}
			})
		}
		f.stages = append(f.stages, names)
	}
	return f
}

// commit publishes a new release of the config and returns its revision.
func (f *rolloutFixture) commit(release string) string {
	f.t.Helper()
	require.NoError(f.t, os.WriteFile(filepath.Join(f.dir, "release.txt"), []byte(release+"\n"), 0o644))
	return f.publish("infra", f.dir)
}

func (f *rolloutFixture) rollout() *magosv1.Rollout {
	f.t.Helper()
	ro := &magosv1.Rollout{}
	require.NoError(f.t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "release"}, ro))
	return ro
}

// waitRollout polls the Rollout until ok holds.
func (f *rolloutFixture) waitRollout(timeout time.Duration, what string, ok func(*magosv1.Rollout) bool) *magosv1.Rollout {
	f.t.Helper()
	return testenv.WaitFor(f.t, env.Client, client.ObjectKey{Namespace: f.ns, Name: "release"}, &magosv1.Rollout{}, timeout, 250*time.Millisecond,
		func(ro *magosv1.Rollout) bool { return ro.Status.ObservedGeneration == ro.Generation && ok(ro) }, "Rollout: "+what)
}

// patchRollout applies mutate to the Rollout.
func (f *rolloutFixture) patchRollout(mutate func(*magosv1.Rollout)) {
	f.t.Helper()
	ro := f.rollout()
	patch := client.MergeFrom(ro.DeepCopy())
	mutate(ro)
	require.NoError(f.t, env.Client.Patch(context.Background(), ro, patch))
}

// promote approves revision for stage.
func (f *rolloutFixture) promote(stage, revision string) {
	f.patchRollout(func(ro *magosv1.Rollout) {
		ro.Spec.Promotions = append(ro.Spec.Promotions, magosv1.Promotion{Stage: stage, Revision: revision})
	})
}

// stageIs is a wait condition: stage has phase for revision.
func stageIs(stage string, phase magosv1.StagePhase, revision string) func(*magosv1.Rollout) bool {
	return func(ro *magosv1.Rollout) bool {
		st := stageOf(ro, stage)
		return ro.Status.Revision == revision && st != nil && st.Phase == phase
	}
}

// rolledOut is a wait condition: revision reached every stage.
func rolledOut(revision string) func(*magosv1.Rollout) bool {
	return func(ro *magosv1.Rollout) bool {
		ready := conditionOf(ro.Status.Conditions, magosv1.ReadyCondition)
		return ro.Status.Revision == revision && ready != nil && ready.Status == metav1.ConditionTrue
	}
}

func stageOf(ro *magosv1.Rollout, name string) *magosv1.StageStatus {
	for i := range ro.Status.Stages {
		if ro.Status.Stages[i].Name == name {
			return &ro.Status.Stages[i]
		}
	}
	return nil
}

func conditionOf(cs []metav1.Condition, t string) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// applyRecord is one apply Job as seen by a watch: the order of watch
// events is the order of the writes, so Created/Finished order the Jobs
// exactly, unlike the second-granular timestamps in objects.
type applyRecord struct {
	Job, Workspace, Revision string
	Created, Finished        time.Time
	Succeeded                bool
}

// applyLog records every Job of a namespace that applies: apply Jobs, and
// fast runs' (a Rollout gates its Workspaces, so they should have none).
type applyLog struct {
	mu   sync.Mutex
	jobs map[string]*applyRecord
}

func watchApplies(t testing.TB, ns string) *applyLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := kubernetes.NewForConfigOrDie(env.Config).BatchV1().Jobs(ns).Watch(ctx,
		metav1.ListOptions{LabelSelector: magosv1.PhaseLabel + " in (" + magosv1.RunApply + "," + magosv1.RunPlanApply + ")"})
	require.NoError(t, err)
	l := &applyLog{jobs: map[string]*applyRecord{}}
	go func() {
		for ev := range w.ResultChan() {
			job, ok := ev.Object.(*batchv1.Job)
			if !ok {
				continue
			}
			l.observe(job, time.Now())
		}
	}()
	return l
}

func (l *applyLog) observe(job *batchv1.Job, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rec := l.jobs[job.Name]
	if rec == nil {
		rec = &applyRecord{Job: job.Name, Workspace: job.Labels[magosv1.WorkspaceLabel], Revision: job.Annotations[magosv1.RevisionAnnotation], Created: now}
		l.jobs[job.Name] = rec
	}
	if !rec.Finished.IsZero() {
		return
	}
	for _, c := range job.Status.Conditions {
		if c.Status == corev1.ConditionTrue && (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) {
			rec.Finished, rec.Succeeded = now, c.Type == batchv1.JobComplete
		}
	}
}

// of returns the apply Jobs of a revision (all revisions if empty) by the
// Workspaces named, ordered by creation.
func (l *applyLog) of(revision string, workspaces ...string) []applyRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []applyRecord
	for _, rec := range l.jobs {
		if (revision == "" || rec.Revision == revision) && (len(workspaces) == 0 || slices.Contains(workspaces, rec.Workspace)) {
			out = append(out, *rec)
		}
	}
	slices.SortFunc(out, func(a, b applyRecord) int { return a.Created.Compare(b.Created) })
	return out
}

// assertStagesInOrder checks that every Workspace applied revision exactly
// once and that no apply of a stage started before every apply of the
// previous stage finished; a stage listed in serial applied one at a time.
func (f *rolloutFixture) assertStagesInOrder(revision string, serial ...int) {
	t := f.t
	t.Helper()
	var prevFinished time.Time
	for i, names := range f.stages {
		recs := f.applies.of(revision, names...)
		require.Len(t, recs, len(names), "stage %d: one apply Job per Workspace for %s: %+v", i, revision, recs)
		var last time.Time
		for j, rec := range recs {
			assert.True(t, rec.Succeeded, "apply %s succeeded", rec.Job)
			assert.True(t, rec.Created.After(prevFinished), "apply %s of stage %d started before the previous stage finished", rec.Job, i)
			if slices.Contains(serial, i) && j > 0 {
				assert.True(t, rec.Created.After(recs[j-1].Finished), "maxParallel 1: apply %s started before %s finished", rec.Job, recs[j-1].Job)
			}
			if rec.Finished.After(last) {
				last = rec.Finished
			}
		}
		prevFinished = last
	}
}

// assertStatusTimesInOrder checks the same order on the times recorded in
// status: each stage started after the previous one completed, and each
// Workspace applied the revision within its stage's window.
func (f *rolloutFixture) assertStatusTimesInOrder(ro *magosv1.Rollout, revision string) {
	t := f.t
	t.Helper()
	var prevCompleted *metav1.Time
	for i, st := range ro.Status.Stages {
		require.NotNil(t, st.Started, "stage %s started", st.Name)
		require.NotNil(t, st.Completed, "stage %s completed", st.Name)
		if prevCompleted != nil {
			assert.False(t, st.Started.Before(prevCompleted), "stage %s started %s before stage %d completed %s", st.Name, st.Started, i-1, prevCompleted)
		}
		for _, w := range st.Workspaces {
			assert.Equal(t, revision, w.AppliedRevision, "Workspace %s", w.Name)
			require.NotNil(t, w.AppliedAt)
			assert.False(t, w.AppliedAt.Before(st.Started), "Workspace %s applied at %s before its stage started at %s", w.Name, w.AppliedAt, st.Started)
			assert.False(t, st.Completed.Before(w.AppliedAt), "stage %s completed before Workspace %s applied", st.Name, w.Name)
		}
		prevCompleted = st.Completed
	}
}

// rolloutPhaseSeries reports whether magos_resource_info has Rollout
// "release" of ns in phase.
func rolloutPhaseSeries(t *testing.T, ns, phase string) bool {
	t.Helper()
	_, ok := seriesValue(t, "magos_resource_info", map[string]string{"kind": magosv1.RolloutKind, "namespace": ns, "name": "release", "phase": phase})
	return ok
}

// metricSum is the sum of every series of the in-process metric family
// name (a counter or gauge), 0 if it has none.
func metricSum(t *testing.T, name string) float64 {
	t.Helper()
	sum, _ := seriesValue(t, name, nil)
	return sum
}

// workspaceName is the i-th Workspace of a stage: <stage>-a, <stage>-b…
// for the first 26, <stage>-026… after.
func workspaceName(stage string, i int) string {
	if i < 26 {
		return stage + "-" + string(rune('a'+i))
	}
	return fmt.Sprintf("%s-%03d", stage, i)
}
