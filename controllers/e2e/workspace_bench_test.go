package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

// BenchmarkRevision compares, in one run, raw OpenTofu init+plan+apply of
// a configuration of 200 and of 1,000 terraform_data with Magos end to
// end on the same configuration (a new revision published → Applied and
// Ready), on both paths: the fast path (nothing decides on the plan: one
// Job plans and applies) and the gated path (one policy selects the
// Workspace, approval Auto: a plan Job, the gate, an apply Job with the
// apply-time proof). It prints, beside each target, the ratio to raw, the
// fixed overhead (Magos's time minus the engine's own init, plan and
// apply), where the time goes, and the apiserver writes per revision.
func BenchmarkRevision(b *testing.B) {
	for _, c := range []struct {
		resources int
		gated     bool
		target    float64
	}{{200, false, 1.6}, {200, true, 0}, {1000, false, 1.15}, {1000, true, 1.5}} {
		path := "fast"
		if c.gated {
			path = "gated"
		}
		b.Run(fmt.Sprintf("%d-%s", c.resources, path), func(b *testing.B) { benchRevision(b, c.resources, c.gated, c.target) })
	}
}

// benchRevision is one case of BenchmarkRevision; target is the ratio to
// raw it should stay under (0: none).
func benchRevision(b *testing.B, resources int, gated bool, target float64) {
	s := newStack(b)
	magosDir, rawDir := b.TempDir(), b.TempDir()
	testenv.WriteWideConfig(b, magosDir, resources, 0)
	rev := s.gitRepository("wide", magosDir)
	var mutate func(*magosv1.Workspace)
	if gated {
		mutate = passingPolicy(b)
	}
	s.newWorkspace("wide", "wide", mutate)
	s.waitWorkspace("wide", 5*time.Minute, "applies the first revision", appliedRevision(rev))
	testenv.WriteWideConfig(b, rawDir, resources, 0)
	testenv.RawTofu(b, env.Root, rawDir)

	var raw testenv.RawTimes
	var magos, engine time.Duration
	var segments []testenv.RunSegment
	var requests apiserverRequests
	timed := 0
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		testenv.WriteWideConfig(b, rawDir, resources, i)
		took := testenv.RawTofu(b, env.Root, rawDir)
		for j := range raw {
			raw[j] += took[j]
		}

		testenv.WriteWideConfig(b, magosDir, resources, i)
		ctx, stop := context.WithCancel(context.Background())
		before := readAPIServerRequests(b)
		start := time.Now()
		tl := testenv.WatchRun(ctx, env.Config, s.ns, "wide", start)
		rev := s.publish("wide", magosDir)
		applied := waitApplied(b, s.ns, 1, appliedRevision(rev), start)[0]
		// The last writes of a run (its Pod's and Job's end) may land
		// just after the Workspace is Ready: counted once they settle.
		time.Sleep(500 * time.Millisecond)
		requests = requests.plus(readAPIServerRequests(b).minus(before))
		stop()
		magos += applied
		engine += tl.EngineTime()
		if segs := tl.Segments(applied); segs != nil {
			segments = testenv.AddSegments(segments, segs)
			timed++
		}
	}
	b.StopTimer()
	n := float64(b.N)
	rawS, magosS := raw.Total().Seconds()/n, magos.Seconds()/n
	b.ReportMetric(rawS, "raw-tofu-s/op")
	b.ReportMetric(magosS, "magos-s/op")
	ratio := "magos/raw"
	if target > 0 {
		ratio = fmt.Sprintf("magos/raw(target<=%.2f)", target)
	}
	b.ReportMetric(magosS/rawS, ratio)
	overhead := magosS - engine.Seconds()/n
	b.ReportMetric(overhead, "overhead-s/op")
	b.ReportMetric(requests.writes/n, "writes/op")
	name := b.Name()
	// Printed rather than logged: a benchmark's log is cut at ten lines.
	fmt.Printf("%s: raw tofu init+plan+apply %.2fs (init %.2fs, plan %.2fs, apply %.2fs), Magos new revision→Applied %.2fs, ratio %.2f%s; "+
		"fixed overhead (Magos minus the engine's init, plan and apply) %.2fs%s\n",
		name, rawS, raw[0].Seconds()/n, raw[1].Seconds()/n, raw[2].Seconds()/n, magosS, magosS/rawS, targetNote(magosS/rawS, target),
		overhead, targetNote(overhead, map[bool]float64{false: 0.25, true: 0}[gated]))
	if timed > 0 {
		fmt.Printf("%s: where Magos's time goes (mean of %d runs):\n%s", name, timed, testenv.FormatSegments(segments, timed))
	}
	writeTarget := map[bool]float64{false: 20, true: 30}[gated]
	fmt.Printf("%s: apiserver requests per revision: %.0f, of them %.0f writes%s (%s)\n",
		name, requests.all/n, requests.writes/n, targetNote(requests.writes/n, writeTarget), requests.breakdown(b.N))
}

// targetNote says how value compares with target (none when target is 0).
func targetNote(value, target float64) string {
	switch {
	case target <= 0:
		return ""
	case value <= target:
		return fmt.Sprintf(" (target ≤ %.2f: met)", target)
	}
	return fmt.Sprintf(" (target ≤ %.2f: missed by %.0f%%)", target, 100*(value/target-1))
}
