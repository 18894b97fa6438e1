package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/magos-dev/magos/tools/harness/executor"
)

// cpuUse is CPU seconds by process: this test process (the controllers,
// the executor, the local source and the test itself), the runner
// processes the executor ran, the engine processes they ran, and the
// control plane (kube-apiserver, etcd), which serves every test in the
// package.
type cpuUse struct {
	inProcess, runners, engines, apiserver, etcd float64
}

// sampleCPU reads the CPU seconds used so far; ex is the stack's executor.
func sampleCPU(ex *executor.Executor) cpuUse {
	var self syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	sec := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
	run := ex.ProcessCPU()
	return cpuUse{
		inProcess: sec(self.Utime) + sec(self.Stime),
		runners:   run.Containers.Seconds(),
		engines:   run.Children.Seconds(),
		apiserver: childCPU("kube-apiserver"),
		etcd:      childCPU("etcd"),
	}
}

// sub is the CPU used between two samples.
func (u cpuUse) sub(before cpuUse) cpuUse {
	return cpuUse{
		inProcess: u.inProcess - before.inProcess,
		runners:   u.runners - before.runners,
		engines:   u.engines - before.engines,
		apiserver: u.apiserver - before.apiserver,
		etcd:      u.etcd - before.etcd,
	}
}

// withoutControlPlane is what the target is about: the engine, the
// runners, the controllers and the executor; control is the control plane.
func (u cpuUse) withoutControlPlane() float64 { return u.inProcess + u.runners + u.engines }
func (u cpuUse) control() float64             { return u.apiserver + u.etcd }

// perWorkspace is the CPU of n Workspaces' runs, divided by n.
func (u cpuUse) perWorkspace(n int) cpuUse {
	d := float64(n)
	return cpuUse{inProcess: u.inProcess / d, runners: u.runners / d, engines: u.engines / d, apiserver: u.apiserver / d, etcd: u.etcd / d}
}

// cpuRun is the CPU per Workspace of one run of the benchmark.
type cpuRun struct {
	name string
	per  cpuUse
}

// cpuTargets are the targets reportCPU prints beside the figures: all but
// the control plane over raw OpenTofu, on the fast and the gated path, and
// what all but the engine and the control plane may cost per run (0: none).
type cpuTargets struct{ fast, gated, nonEngine float64 }

// reportCPU reports each run's CPU per Workspace as metrics and prints
// them by process as a table, each beside raw OpenTofu's and the targets.
// The table goes to stdout: a benchmark's log is cut after ten lines.
func reportCPU(b *testing.B, raw float64, runs []cpuRun, targets cpuTargets) {
	for _, r := range runs {
		b.ReportMetric(r.per.withoutControlPlane(), r.name+"-cpu-s/workspace")
		b.ReportMetric(r.per.withoutControlPlane()/raw, r.name+"-cpu/raw")
		b.ReportMetric(r.per.engines, r.name+"-engine-cpu-s/workspace")
		b.ReportMetric(r.per.inProcess+r.per.runners, r.name+"-non-engine-cpu-s/workspace")
		b.ReportMetric(r.per.control(), r.name+"-controlplane-cpu-s/workspace")
	}
	var t strings.Builder
	fmt.Fprintf(&t, "%s: CPU s per Workspace (raw tofu init+plan+apply: %.2f)\n", b.Name(), raw)
	fmt.Fprintf(&t, "  %-40s", "")
	for _, r := range runs {
		fmt.Fprintf(&t, " %16s", r.name)
	}
	t.WriteString("\n")
	row := func(name string, v func(cpuUse) float64) {
		fmt.Fprintf(&t, "  %-40s", name)
		for _, r := range runs {
			fmt.Fprintf(&t, " %16.2f", v(r.per))
		}
		t.WriteString("\n")
	}
	row("engine (OpenTofu)", func(u cpuUse) float64 { return u.engines })
	row("runner processes", func(u cpuUse) float64 { return u.runners })
	row("controllers+executor (in-process)", func(u cpuUse) float64 { return u.inProcess })
	row("all but the engine and control plane", func(u cpuUse) float64 { return u.inProcess + u.runners })
	row("all but the control plane", cpuUse.withoutControlPlane)
	row("  over raw", func(u cpuUse) float64 { return u.withoutControlPlane() / raw })
	row("kube-apiserver", func(u cpuUse) float64 { return u.apiserver })
	row("etcd", func(u cpuUse) float64 { return u.etcd })
	row("all, with the control plane", func(u cpuUse) float64 { return u.withoutControlPlane() + u.control() })
	for _, r := range runs {
		gated := strings.HasSuffix(r.name, "-gated")
		if target := map[bool]float64{false: targets.fast, true: targets.gated}[gated]; target > 0 {
			fmt.Fprintf(&t, "  %s: all but the control plane %.2f× raw%s\n", r.name, r.per.withoutControlPlane()/raw, targetNote(r.per.withoutControlPlane()/raw, target))
		}
		if targets.nonEngine > 0 && !gated {
			fmt.Fprintf(&t, "  %s: all but the engine and control plane %.3f CPU s per run%s\n", r.name, r.per.inProcess+r.per.runners, targetNote(r.per.inProcess+r.per.runners, targets.nonEngine))
		}
	}
	fmt.Print(t.String())
}

// childCPU is the CPU seconds used so far by this process's children named
// comm (the control plane envtest started), 0 if there is none.
func childCPU(comm string) float64 {
	stats, _ := filepath.Glob("/proc/[0-9]*")
	var total float64
	for _, dir := range stats {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			continue
		}
		if st, err := executor.ReadProcStat(pid); err == nil && st.Comm == comm && st.PPID == os.Getpid() {
			total += st.Self.Seconds()
		}
	}
	return total
}
