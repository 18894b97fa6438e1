package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Binary is a program of the repository that tests build once per test
// binary (go build's cache makes a rebuild of unchanged code fast), into
// bin/test/<Name>.
type Binary struct {
	// Dir is the module directory, relative to the repository root, and
	// Pkg the package in it (go build Pkg, run in Dir); Name is the file.
	Dir, Pkg, Name string

	once sync.Once
	path string
	err  error
}

// PolicyEngine is the workspace-controller's policy engine
// (controllers/policy-engine), which it starts as a process.
var PolicyEngine = &Binary{Dir: "controllers", Pkg: "./policy-engine", Name: "policy-engine"}

// CLI is kubectl-magos (the cli module).
var CLI = &Binary{Dir: "cli", Pkg: "./kubectl-magos", Name: "kubectl-magos"}

// Build compiles the program the first time and returns its path. A test
// that needs one skips under -short (make test-unit: pure tests only);
// make test runs it.
func (b *Binary) Build(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("builds and runs " + b.Name + ": not under -short")
	}
	b.once.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			b.err = err
			return
		}
		// One file per program under the ignored bin/test, replaced
		// atomically: test binaries of several packages may build it at
		// once, and a process already running keeps the file it started.
		dir := filepath.Join(root, "bin", "test")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.err = err
			return
		}
		tmp, err := os.CreateTemp(dir, "."+b.Name+"-")
		if err != nil {
			b.err = err
			return
		}
		_ = tmp.Close()
		defer os.Remove(tmp.Name())
		cmd := exec.Command("go", "build", "-o", tmp.Name(), b.Pkg)
		cmd.Dir = filepath.Join(root, b.Dir)
		// Static, as the images build them (the policy engine's sandbox
		// needs a binary without cgo).
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v: %s", b.Name, err, out)
			return
		}
		b.path = filepath.Join(dir, b.Name)
		b.err = os.Rename(tmp.Name(), b.path)
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}
