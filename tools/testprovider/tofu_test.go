package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"
)

// tofuVersion is the OpenTofu the Makefile builds into bin/engines.
const tofuVersion = "1.10.6"

// providerVersion is the version the tests install; it matches main.version.
const providerVersion = "0.1.0"

// tofuTimeout bounds one OpenTofu command.
const tofuTimeout = 3 * time.Minute

// scratch is a directory for the whole test binary, removed by TestMain.
var scratch string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "magostest-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	scratch = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// findTofu returns the OpenTofu binary under the repository's bin/, the
// repository root being the nearest parent holding go.work. It skips the
// test when the binary has not been built.
func findTofu(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.work above the working directory, so no repository bin/ to find OpenTofu in")
		}
		dir = parent
	}
	bin := filepath.Join(dir, "bin", "engines", "opentofu", tofuVersion, "tofu")
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("OpenTofu %s is not built at %s; run `make tools` in %s first", tofuVersion, bin, dir)
	}
	return bin
}

var (
	mirrorOnce sync.Once
	mirrorCLI  string // the rendered CLI configuration
	mirrorErr  error
)

// providerMirror builds the provider once into a filesystem mirror under
// scratch, renders tofurc.tmpl for it and returns the CLI config's path.
func providerMirror(t *testing.T) string {
	t.Helper()
	mirrorOnce.Do(func() { mirrorCLI, mirrorErr = buildMirror() })
	if mirrorErr != nil {
		t.Fatal(mirrorErr)
	}
	return mirrorCLI
}

func buildMirror() (string, error) {
	providers := filepath.Join(scratch, "providers")
	bin := filepath.Join(providers, "registry.opentofu.org", "magos", "magostest", providerVersion,
		runtime.GOOS+"_"+runtime.GOARCH, "terraform-provider-magostest_v"+providerVersion)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the provider: %v\n%s", err, out)
	}

	tmpl, err := template.ParseFiles("tofurc.tmpl")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, struct{ ProvidersDir string }{providers}); err != nil {
		return "", err
	}
	cli := filepath.Join(scratch, "tofurc")
	return cli, os.WriteFile(cli, []byte(b.String()), 0o644)
}

// workdir is one OpenTofu working directory with its configuration.
type workdir struct {
	t    *testing.T
	tofu string
	dir  string
	env  []string
}

// newWorkdir writes mainTF into a fresh directory and returns it, set up to
// run the repository's OpenTofu with the provider mirror.
func newWorkdir(t *testing.T, mainTF string) *workdir {
	t.Helper()
	tofu := findTofu(t)
	cli := providerMirror(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(mainTF), 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") {
			env = append(env, kv)
		}
	}
	env = append(env, "TF_CLI_CONFIG_FILE="+cli, "TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1")
	return &workdir{t: t, tofu: tofu, dir: dir, env: env}
}

// run runs `tofu args... -no-color` and returns its combined output and
// exit code; it fails the test only when OpenTofu cannot be run at all.
func (w *workdir) run(args ...string) (string, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.t.Context(), tofuTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.tofu, append(args, "-no-color")...)
	cmd.Dir = w.dir
	cmd.Env = w.env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit) && ctx.Err() == nil:
		return string(out), exit.ExitCode()
	default:
		w.t.Fatalf("tofu %s: %v\n%s", strings.Join(args, " "), err, out)
		return "", -1
	}
}

// must runs tofu and fails the test unless it exits with want.
func (w *workdir) must(want int, args ...string) string {
	w.t.Helper()
	out, code := w.run(args...)
	if code != want {
		w.t.Fatalf("tofu %s exited %d, want %d:\n%s", strings.Join(args, " "), code, want, out)
	}
	return out
}

// mainTF is a configuration requiring the provider from its mirror, with
// the given provider block and body.
func mainTF(providerBlock, body string) string {
	return `terraform {
  required_providers {
    magostest = {
      source  = "registry.opentofu.org/magos/magostest"
      version = "` + providerVersion + `"
    }
  }
}

` + providerBlock + "\n\n" + body + "\n"
}
