package e2e

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace"
)

// fanOut is how many Workspaces BenchmarkFanOut creates at once.
const fanOut = 30

// BenchmarkFanOut creates 30 Workspaces of a 10-resource configuration at
// once and reports, in one run, a lone Workspace's time from creation to
// Applied, then for the fan-out without a bound on runs and with bounds of
// 4 and 8: the first, median and last Workspace to be Applied, the
// first over the lone time (target ≤ 2), and the CPU seconds per
// Workspace by process (cpuUse: OpenTofu, runners, the in-process
// controllers and executor, and apart the control plane) against raw
// OpenTofu's init+plan+apply (target: all but the control plane ≤ 2×).
func BenchmarkFanOut(b *testing.B) {
	rawDir := b.TempDir()
	writeWideConfig(b, rawDir, 10, 0)
	rawTofu(b, rawDir)
	cpu := childrenCPUSeconds()
	rawTofu(b, rawDir)
	rawCPU := childrenCPUSeconds() - cpu

	loneRun := fanOutRun(b, 1, 0)
	lone := loneRun.last
	b.ReportMetric(lone.Seconds(), "lone-s")
	b.ReportMetric(rawCPU, "raw-tofu-cpu-s")
	cpuRuns := []cpuRun{{name: "lone", per: loneRun.cpu}}
	for _, bound := range []int{0, 4, 8} {
		r := fanOutRun(b, fanOut, bound)
		name := "unbounded"
		if bound > 0 {
			name = fmt.Sprintf("bound%d", bound)
		}
		b.ReportMetric(r.first.Seconds(), name+"-first-s")
		b.ReportMetric(r.median.Seconds(), name+"-median-s")
		b.ReportMetric(r.last.Seconds(), name+"-all-s")
		b.ReportMetric(r.first.Seconds()/lone.Seconds(), name+"-first/lone(target<=2)")
		cpuRuns = append(cpuRuns, cpuRun{name: name, per: r.cpu.perWorkspace(fanOut)})
		b.Logf("%d Workspaces, %s: first Applied after %.1fs (lone %.1fs), median %.1fs, all %.1fs",
			fanOut, name, r.first.Seconds(), lone.Seconds(), r.median.Seconds(), r.last.Seconds())
	}
	reportCPU(b, rawCPU, cpuRuns)
}

// fanOutResult is when the Workspaces of one fan-out were Applied, from
// their creation, and the CPU seconds it took.
type fanOutResult struct {
	first, median, last time.Duration
	cpu                 cpuUse
}

// fanOutRun creates n Workspaces at once on a new stack whose
// workspace-controller runs at most bound runs at once (0: unbounded) and
// waits until all are Applied.
func fanOutRun(b *testing.B, n, bound int) fanOutResult {
	// The fan-out is one namespace's: the controller's bound, not the
	// namespace's, is what it measures.
	s := newStackWith(b, stackOptions{Concurrency: 4, Workspace: func(o *workspace.Options) {
		o.MaxConcurrentRuns, o.MaxConcurrentRunsPerNamespace = bound, 0
	}})
	dir := b.TempDir()
	writeWideConfig(b, dir, 10, 0)
	rev := s.gitRepository("fan", dir)
	cpu := sampleCPU(s.executor)
	start := time.Now()
	for i := range n {
		s.newWorkspace(fmt.Sprintf("fan-%02d", i), "fan", nil)
	}
	applied := waitApplied(b, s.ns, n, appliedRevision(rev), start)
	r := fanOutResult{cpu: sampleCPU(s.executor).sub(cpu)}
	r.first, r.median, r.last = applied[0], applied[len(applied)/2], applied[len(applied)-1]
	s.stopController()
	return r
}

// waitApplied watches the Workspaces of namespace ns until n of them are
// done and returns, sorted, how long after start each one was. It watches
// rather than lists: listing 30 Workspaces ten times a second costs this
// process and the apiserver more CPU than the controllers spend.
func waitApplied(b *testing.B, ns string, n int, done func(*magosv1.Workspace) bool, start time.Time) []time.Duration {
	b.Helper()
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	require.NoError(b, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	w, err := wc.Watch(ctx, &magosv1.WorkspaceList{}, client.InNamespace(ns))
	require.NoError(b, err)
	defer w.Stop()
	seen := map[string]time.Duration{}
	for len(seen) < n {
		select {
		case ev, ok := <-w.ResultChan():
			require.True(b, ok, "the watch of the Workspaces ended")
			if ws, isWS := ev.Object.(*magosv1.Workspace); isWS && done(ws) {
				if _, dup := seen[ws.Name]; !dup {
					seen[ws.Name] = time.Since(start)
				}
			}
		case <-ctx.Done():
			require.FailNow(b, "not all Workspaces are Applied", "%d of %d after %s", len(seen), n, time.Since(start))
		}
	}
	times := make([]time.Duration, 0, n)
	for _, d := range seen {
		times = append(times, d)
	}
	slices.Sort(times)
	return times
}

// childrenCPUSeconds is the user and system CPU time of this process's
// children that ended.
func childrenCPUSeconds() float64 {
	var children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	sec := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
	return sec(children.Utime) + sec(children.Stime)
}
