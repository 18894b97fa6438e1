package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// WriteWideConfig writes a configuration of n terraform_data resources
// whose inputs carry generation, so each generation changes every
// resource: the configuration the run-cost benchmarks compare Magos and
// raw OpenTofu on.
func WriteWideConfig(t testing.TB, dir string, n, generation int) {
	t.Helper()
	src := fmt.Sprintf(`resource "terraform_data" "r" {
  count = %d
  input = "generation-%d-${count.index}"
}

output "count" {
  value = length(terraform_data.r)
}
`, n, generation)
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TofuVersion is the OpenTofu `make tools` builds (the Makefile's
// TOFU_VERSION) and the tests run.
const TofuVersion = "1.10.6"

// TofuPath is where `make tools` puts that OpenTofu under the repository
// root.
func TofuPath(root string) string {
	return filepath.Join(root, "bin", "engines", "opentofu", TofuVersion, "tofu")
}

// Tofu is the OpenTofu the tests run, skipping the test when it has not
// been built, and failing it instead under CI=true outside -short (make
// test-unit runs before anything is built).
func Tofu(tb testing.TB) string {
	tb.Helper()
	root, err := RepoRoot()
	if err != nil {
		tb.Fatalf("finding the repository root: %v", err)
	}
	bin := TofuPath(root)
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") == "true" && !testing.Short() {
			tb.Fatalf("OpenTofu %s not found at %s", TofuVersion, bin)
		}
		tb.Skipf("OpenTofu %s not found at %s: run `make tools` to build it", TofuVersion, bin)
	}
	return bin
}

// RawTimes are how long raw OpenTofu's init, plan and apply took.
type RawTimes [3]time.Duration

// Total is init, plan and apply together.
func (t RawTimes) Total() time.Duration { return t[0] + t[1] + t[2] }

// RawTofu runs init, plan -out and apply of dir with local state, as a
// person would without Magos, with the OpenTofu the tests use (under
// root's bin/), and returns how long each took.
func RawTofu(t testing.TB, root, dir string) RawTimes {
	t.Helper()
	tofu := TofuPath(root)
	var took RawTimes
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
			t.Fatalf("tofu %s: %v\n%s", args[0], err, out)
		}
		took[i] = time.Since(start)
	}
	return took
}
