package e2e

import (
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

// rawTofu runs init, plan -out and apply of dir with local state, as a
// person would without Magos, and returns how long that took.
func rawTofu(b *testing.B, dir string) time.Duration {
	b.Helper()
	tofu := filepath.Join(env.Root, "bin", "engines", "opentofu", "1.10.6", "tofu")
	start := time.Now()
	for _, args := range [][]string{
		{"init", "-input=false", "-no-color"},
		{"plan", "-input=false", "-no-color", "-out=plan.bin"},
		{"apply", "-input=false", "-no-color", "plan.bin"},
	} {
		cmd := exec.Command(tofu, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "HOME="+dir, "TF_DATA_DIR="+filepath.Join(dir, ".terraform"))
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("tofu %s: %v\n%s", args[0], err, out)
		}
	}
	return time.Since(start)
}

// BenchmarkWorkspace200Resources compares, in one run, raw OpenTofu
// init+plan+apply of a 200-resource configuration with Magos end to end on
// the same configuration: a new revision published → planned in a Job →
// applied in a Job → Workspace Ready. The ratio is Magos's overhead.
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

	var raw, magos time.Duration
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		writeWideConfig(b, rawDir, resources, i)
		raw += rawTofu(b, rawDir)

		writeWideConfig(b, magosDir, resources, i)
		start := time.Now()
		rev := s.publish("wide", magosDir)
		s.waitWorkspace("wide", 10*time.Minute, "applies the new revision", appliedRevision(rev))
		magos += time.Since(start)
	}
	b.StopTimer()
	rawS, magosS := raw.Seconds()/float64(b.N), magos.Seconds()/float64(b.N)
	b.ReportMetric(rawS, "raw-tofu-s/op")
	b.ReportMetric(magosS, "magos-s/op")
	b.ReportMetric(magosS/rawS, "magos/raw")
	b.Logf("%d resources: raw tofu init+plan+apply %.2fs, Magos new revision→Applied %.2fs, ratio %.2f", resources, rawS, magosS, magosS/rawS)
}
