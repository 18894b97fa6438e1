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
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// fanOut is how many Workspaces BenchmarkFanOut creates at once.
const fanOut = 30

// BenchmarkFanOut creates 30 Workspaces of a 10-resource configuration at
// once and reports, in one run, a lone Workspace's time from creation to
// Applied, then for the fan-out without a bound on runs and with bounds of
// 4 and 8 on the fast path, and unbounded on the gated path (a policy
// selects every Workspace): the first, median and last Workspace to be
// Applied, the first over the lone time (target ≤ 1.5), and the CPU
// seconds per Workspace by process (cpuUse: OpenTofu, runners, the
// in-process controllers and executor, and apart the control plane)
// against raw OpenTofu's init+plan+apply, and what all but the engine and
// the control plane cost per run (target ≤ 0.12 CPU s on the fast path).
func BenchmarkFanOut(b *testing.B) {
	rawCPU := rawTofuCPU(b, 10)
	loneRun := fanOutRun(b, fanOutCase{n: 1, resources: 10})
	lone := loneRun.last
	b.ReportMetric(lone.Seconds(), "lone-s")
	b.ReportMetric(rawCPU, "raw-tofu-cpu-s")
	cpuRuns := []cpuRun{{name: "lone", per: loneRun.cpu}}
	for _, c := range []fanOutCase{{n: fanOut, resources: 10}, {n: fanOut, bound: 4, resources: 10}, {n: fanOut, bound: 8, resources: 10}, {n: fanOut, resources: 10, gated: true}} {
		r := fanOutRun(b, c)
		name := c.name()
		b.ReportMetric(r.first.Seconds(), name+"-first-s")
		b.ReportMetric(r.median.Seconds(), name+"-median-s")
		b.ReportMetric(r.last.Seconds(), name+"-all-s")
		b.ReportMetric(r.first.Seconds()/lone.Seconds(), name+"-first/lone(target<=1.5)")
		cpuRuns = append(cpuRuns, cpuRun{name: name, per: r.cpu.perWorkspace(fanOut)})
		fmt.Printf("BenchmarkFanOut: %d Workspaces, %s: first Applied after %.1fs (lone %.1fs, %.2f×%s), median %.1fs, all %.1fs\n",
			fanOut, name, r.first.Seconds(), lone.Seconds(), r.first.Seconds()/lone.Seconds(), targetNote(r.first.Seconds()/lone.Seconds(), 1.5),
			r.median.Seconds(), r.last.Seconds())
	}
	reportCPU(b, rawCPU, cpuRuns, cpuTargets{nonEngine: 0.12})
}

// BenchmarkFanOut200 creates 30 Workspaces of a 200-resource configuration
// at once, on the fast path and on the gated path, and reports their CPU
// per Workspace against raw OpenTofu's (targets: all but the control plane
// ≤ 1.3× raw on the fast path, ≤ 1.8× on the gated path).
func BenchmarkFanOut200(b *testing.B) {
	rawCPU := rawTofuCPU(b, 200)
	var cpuRuns []cpuRun
	for _, c := range []fanOutCase{{n: fanOut, resources: 200}, {n: fanOut, resources: 200, gated: true}} {
		r := fanOutRun(b, c)
		cpuRuns = append(cpuRuns, cpuRun{name: c.name(), per: r.cpu.perWorkspace(fanOut)})
	}
	reportCPU(b, rawCPU, cpuRuns, cpuTargets{fast: 1.3, gated: 1.8})
}

// rawTofuCPU is the CPU seconds raw OpenTofu's init+plan+apply of a
// configuration of n terraform_data takes.
func rawTofuCPU(b *testing.B, n int) float64 {
	rawDir := b.TempDir()
	testenv.WriteWideConfig(b, rawDir, n, 0)
	testenv.RawTofu(b, env.Root, rawDir)
	cpu := childrenCPUSeconds()
	testenv.WriteWideConfig(b, rawDir, n, 1)
	testenv.RawTofu(b, env.Root, rawDir)
	return childrenCPUSeconds() - cpu
}

// fanOutCase is one fan-out: n Workspaces of a configuration of resources
// terraform_data, at most bound runs at once (0: unbounded), on the gated
// path (a policy selects them) or the fast path.
type fanOutCase struct {
	n, bound, resources int
	gated               bool
}

func (c fanOutCase) name() string {
	name := "unbounded"
	if c.bound > 0 {
		name = fmt.Sprintf("bound%d", c.bound)
	}
	if c.gated {
		name += "-gated"
	}
	return name
}

// fanOutResult is when the Workspaces of one fan-out were Applied, from
// their creation, and the CPU seconds it took.
type fanOutResult struct {
	first, median, last time.Duration
	cpu                 cpuUse
}

// fanOutRun creates c.n Workspaces at once on a new stack whose
// workspace-controller runs at most c.bound runs at once and waits until
// all are Applied.
func fanOutRun(b *testing.B, c fanOutCase) fanOutResult {
	// The fan-out is one namespace's: the controller's bound, not the
	// namespace's, is what it measures.
	s := newStackWith(b, stackOptions{Concurrency: 4, Workspace: func(o *config.Options) {
		o.MaxConcurrentRuns, o.MaxConcurrentRunsPerNamespace = c.bound, 0
	}})
	dir := b.TempDir()
	testenv.WriteWideConfig(b, dir, c.resources, 0)
	rev := s.gitRepository("fan", dir)
	var mutate func(*magosv1.Workspace)
	if c.gated {
		mutate = passingPolicy(b)
	}
	cpu := sampleCPU(s.executor)
	start := time.Now()
	for i := range c.n {
		s.newWorkspace(fmt.Sprintf("fan-%02d", i), "fan", mutate)
	}
	applied := waitApplied(b, s.ns, c.n, appliedRevision(rev), start)
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
