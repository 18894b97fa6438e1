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
// Workspace of this process and its children (controllers, executor,
// runners, OpenTofu; not the apiserver) over raw OpenTofu's (target ≤ 2).
func BenchmarkFanOut(b *testing.B) {
	rawDir := b.TempDir()
	writeWideConfig(b, rawDir, 10, 0)
	rawTofu(b, rawDir)
	cpu := cpuSeconds()
	rawTofu(b, rawDir)
	rawCPU := cpuSeconds() - cpu

	lone := fanOutRun(b, 1, 0).last
	b.ReportMetric(lone.Seconds(), "lone-s")
	b.ReportMetric(rawCPU, "raw-tofu-cpu-s")
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
		b.ReportMetric(r.cpu/fanOut, name+"-cpu-s/workspace")
		b.ReportMetric(r.cpu/fanOut/rawCPU, name+"-cpu/raw(target<=2)")
		b.Logf("%d Workspaces, %s: first Applied after %.1fs (lone %.1fs), median %.1fs, all %.1fs; %.2f CPU s per Workspace (raw tofu %.2f)",
			fanOut, name, r.first.Seconds(), lone.Seconds(), r.median.Seconds(), r.last.Seconds(), r.cpu/fanOut, rawCPU)
	}
}

// fanOutResult is when the Workspaces of one fan-out were Applied, from
// their creation, and the CPU seconds it took.
type fanOutResult struct {
	first, median, last time.Duration
	cpu                 float64
}

// fanOutRun creates n Workspaces at once on a new stack whose
// workspace-controller runs at most bound runs at once (0: unbounded) and
// waits until all are Applied.
func fanOutRun(b *testing.B, n, bound int) fanOutResult {
	s := newStackWith(b, stackOptions{Concurrency: 4, Workspace: func(o *workspace.Options) { o.MaxConcurrentRuns = bound }})
	dir := b.TempDir()
	writeWideConfig(b, dir, 10, 0)
	rev := s.gitRepository("fan", dir)
	cpu := cpuSeconds()
	start := time.Now()
	for i := range n {
		s.newWorkspace(fmt.Sprintf("fan-%02d", i), "fan", nil)
	}
	applied := map[string]time.Duration{}
	require.Eventually(b, func() bool {
		var list magosv1.WorkspaceList
		require.NoError(b, env.Client.List(context.Background(), &list, client.InNamespace(s.ns)))
		for i := range list.Items {
			ws := &list.Items[i]
			if _, seen := applied[ws.Name]; !seen && appliedRevision(rev)(ws) {
				applied[ws.Name] = time.Since(start)
			}
		}
		return len(applied) == n
	}, 10*time.Minute, 100*time.Millisecond, "all %d Workspaces are Applied", n)
	r := fanOutResult{cpu: cpuSeconds() - cpu}
	times := make([]time.Duration, 0, n)
	for _, d := range applied {
		times = append(times, d)
	}
	slices.Sort(times)
	r.first, r.median, r.last = times[0], times[len(times)/2], times[len(times)-1]
	s.stopController()
	return r
}

// cpuSeconds is the user and system CPU time of this process and of its
// children that ended.
func cpuSeconds() float64 {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	sec := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
	return sec(self.Utime) + sec(self.Stime) + sec(children.Utime) + sec(children.Stime)
}
