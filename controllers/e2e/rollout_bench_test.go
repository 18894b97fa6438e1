package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// BenchmarkRollout3Stages rolls a new commit out over three Auto stages of
// MAGOS_BENCH_ROLLOUT_WORKSPACES Workspaces each (default 100) with a
// one-resource config, and compares the time from commit to the last stage
// applied with the sum of each stage's slowest apply (Job created →
// finished): the ratio is what ordering the stages costs over applying them
// one stage after another with nothing in between. It then deletes the
// Rollout and times one more commit applied by every Workspace unordered:
// ordered over unordered is the cost of the stages on the same machine.
// Runs go through the
// local executor with at most 6 runner processes at once on this machine.
func BenchmarkRollout3Stages(b *testing.B) {
	perStage := 100
	if v, err := strconv.Atoi(os.Getenv("MAGOS_BENCH_ROLLOUT_WORKSPACES")); err == nil && v > 0 {
		perStage = v
	}
	stages := []magosv1.Stage{
		{Name: "dev", Selector: envSelector("dev")},
		{Name: "staging", Selector: envSelector("staging")},
		{Name: "prod", Selector: envSelector("prod")},
	}
	f := newRolloutFixtureWith(b, perStage, stages, nil, stackOptions{Concurrency: 8, MaxProcesses: 6})
	setup := time.Now()
	f.waitRollout(90*time.Minute, "the first revision rolled out", func(ro *magosv1.Rollout) bool {
		return ro.Status.Revision != "" && rolledOut(ro.Status.Revision)(ro)
	})
	b.Logf("first revision to %d Workspaces (creation, plans and applies): %s", 3*perStage, time.Since(setup).Round(time.Second))

	var total, slowestSum time.Duration
	stageWall := make([]time.Duration, len(stages))
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		rev := f.commit(fmt.Sprintf("bench-%d", i))
		ro := f.waitRollout(90*time.Minute, "rolled out", rolledOut(rev))
		total += time.Since(start)
		for s, names := range f.stages {
			var slowest time.Duration
			for _, rec := range f.applies.of(rev, names...) {
				slowest = max(slowest, rec.Finished.Sub(rec.Created))
			}
			slowestSum += slowest
			st := ro.Status.Stages[s]
			stageWall[s] += st.Completed.Sub(st.Started.Time)
		}
	}
	b.StopTimer()

	// The same commit without a Rollout: every Workspace applies as soon as
	// it planned. Ordered over unordered is what the stages cost here.
	require.NoError(b, env.Client.Delete(context.Background(), f.rollout()))
	start := time.Now()
	rev := f.commit("unordered")
	require.Eventually(b, func() bool {
		var list magosv1.WorkspaceList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(f.ns)); err != nil {
			return false
		}
		for i := range list.Items {
			if !appliedRevision(rev)(&list.Items[i]) {
				return false
			}
		}
		return len(list.Items) == 3*perStage
	}, 90*time.Minute, 500*time.Millisecond, "every Workspace applies the unordered commit")
	unordered := time.Since(start)

	n := float64(b.N)
	b.ReportMetric(unordered.Seconds(), "unordered-commit-to-applied-s")
	b.ReportMetric(total.Seconds()/n/unordered.Seconds(), "ordered-over-unordered")
	b.ReportMetric(total.Seconds()/n, "commit-to-rolled-out-s/op")
	b.ReportMetric(slowestSum.Seconds()/n, "slowest-apply-sum-s/op")
	b.ReportMetric(total.Seconds()/slowestSum.Seconds(), "ordering-ratio")
	for s, st := range stages {
		b.ReportMetric(stageWall[s].Seconds()/n, st.Name+"-stage-s/op")
	}
}
