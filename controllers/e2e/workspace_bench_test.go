package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// writeWideConfig writes a configuration of n terraform_data resources whose
// inputs carry generation, so each generation changes every resource.
func writeWideConfig(b *testing.B, dir string, n, generation int) {
	b.Helper()
	src := fmt.Sprintf(`resource "terraform_data" "r" {
  count = %d
  input = "generation-%d-${count.index}"
}

output "count" {
  value = length(terraform_data.r)
}
`, n, generation)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
}

// rawTimes are how long raw OpenTofu's init, plan and apply took.
type rawTimes [3]time.Duration

func (t rawTimes) total() time.Duration { return t[0] + t[1] + t[2] }

// rawTofu runs init, plan -out and apply of dir with local state, as a
// person would without Magos, and returns how long each took.
func rawTofu(b *testing.B, dir string) rawTimes {
	b.Helper()
	tofu := filepath.Join(env.Root, "bin", "engines", "opentofu", "1.10.6", "tofu")
	var took rawTimes
	for i, args := range [][]string{
		{"init", "-input=false", "-no-color"},
		{"plan", "-input=false", "-no-color", "-out=plan.bin"},
		{"apply", "-input=false", "-no-color", "plan.bin"},
	} {
		cmd := exec.Command(tofu, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "HOME="+dir, "TF_DATA_DIR="+filepath.Join(dir, ".terraform"))
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("tofu %s: %v\n%s", args[0], err, out)
		}
		took[i] = time.Since(start)
	}
	return took
}

// rawShowJSON times the engine's `show -json` of the plan rawTofu left in
// dir: what Magos adds to raw OpenTofu twice by design, to render the plan
// for the policy gate and to check at apply that the binary plan is the
// approved one (docs/security.md).
func rawShowJSON(b *testing.B, dir string) time.Duration {
	b.Helper()
	cmd := exec.Command(filepath.Join(env.Root, "bin", "engines", "opentofu", "1.10.6", "tofu"), "show", "-json", "plan.bin")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "HOME="+dir, "TF_DATA_DIR="+filepath.Join(dir, ".terraform"))
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("tofu show -json: %v\n%s", err, out)
	}
	return time.Since(start)
}

// BenchmarkWorkspace200Resources compares, in one run, raw OpenTofu
// init+plan+apply of a 200-resource configuration with Magos end to end on
// the same configuration: a new revision published → planned in a Job →
// applied in a Job → Workspace Ready. The ratio is Magos's overhead
// (target ≤ 1.25). The floor is raw OpenTofu plus the two `show -json`
// renderings of the plan Magos's guarantees need. The log splits both into
// their steps, averaged over the iterations: raw init, plan and apply; for
// Magos the source and controller before each Job, the executor's start of
// its Pod, the runner's fetch, engine init, engine, render and storage
// steps as it reports them, the rest of the runner's life (start, text,
// outputs, report) and the controller's work after the apply. It also
// prints the apiserver requests per revision, the writes by resource.
func BenchmarkWorkspace200Resources(b *testing.B) {
	const resources = 200
	s := newStack(b)
	magosDir, rawDir := b.TempDir(), b.TempDir()
	writeWideConfig(b, magosDir, resources, 0)
	rev := s.gitRepository("wide", magosDir)
	s.newWorkspace("wide", "wide", nil)
	s.waitWorkspace("wide", 5*time.Minute, "applies the first revision", appliedRevision(rev))
	writeWideConfig(b, rawDir, resources, 0)
	rawTofu(b, rawDir)

	var raw rawTimes
	var magos, show time.Duration
	var segments []runSegment
	var requests apiserverRequests
	timed := 0
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		writeWideConfig(b, rawDir, resources, i)
		took := rawTofu(b, rawDir)
		for j := range raw {
			raw[j] += took[j]
		}
		show += rawShowJSON(b, rawDir)

		writeWideConfig(b, magosDir, resources, i)
		ctx, stop := context.WithCancel(context.Background())
		before := readAPIServerRequests(b)
		start := time.Now()
		tl := s.watchRun(ctx, "wide", start)
		rev := s.publish("wide", magosDir)
		applied := waitApplied(b, s.ns, 1, appliedRevision(rev), start)[0]
		requests = requests.plus(readAPIServerRequests(b).minus(before))
		stop()
		magos += applied
		if segs := tl.segments(applied); segs != nil {
			if segments == nil {
				segments = make([]runSegment, len(segs))
			}
			for j, seg := range segs {
				segments[j].name = seg.name
				segments[j].seconds += seg.seconds
			}
			timed++
		}
	}
	b.StopTimer()
	rawS, magosS := raw.total().Seconds()/float64(b.N), magos.Seconds()/float64(b.N)
	b.ReportMetric(rawS, "raw-tofu-s/op")
	b.ReportMetric(magosS, "magos-s/op")
	showS := show.Seconds() / float64(b.N)
	b.ReportMetric(magosS/rawS, "magos/raw(target<=1.25)")
	b.ReportMetric((rawS+2*showS)/rawS, "floor/raw")
	b.Logf("%d resources: raw tofu init+plan+apply %.2fs (init %.2fs, plan %.2fs, apply %.2fs), Magos new revision→Applied %.2fs, ratio %.2f (target ≤ 1.25); show -json %.2fs, floor raw+2×show %.2f× raw",
		resources, rawS, raw[0].Seconds()/float64(b.N), raw[1].Seconds()/float64(b.N), raw[2].Seconds()/float64(b.N), magosS, magosS/rawS, showS, (rawS+2*showS)/rawS)
	if timed > 0 {
		// Printed rather than logged: a benchmark's log is cut at ten lines.
		fmt.Printf("BenchmarkWorkspace200Resources: where Magos's time goes (mean of %d runs):\n%s", timed, formatSegments(segments, timed))
	}
	fmt.Printf("BenchmarkWorkspace200Resources: apiserver requests per revision: %.0f, of them %.0f writes (%s)\n",
		requests.all/float64(b.N), requests.writes/float64(b.N), requests.breakdown(b.N))
}
