package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDemoAndEveryCommandItPrints runs `make demo` as the README says and
// then every command it prints, in order, against the demo's control
// plane, as a new user would: the plugin through kubectl, the UI (without
// opening a browser), the promotion, and the two edits it suggests (the
// shared module: dev applies a new revision and prod waits for its
// promotion again; dev only: prod plans nothing). `make demo-stop` stops
// it.
func TestDemoAndEveryCommandItPrints(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo")
	}
	root := env.Root
	if _, err := os.Stat(filepath.Join(root, "bin", "demo", "pids")); err == nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("a demo is already running")
		}
		t.Skip("a demo is already running here; stop it with make demo-stop")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	mk := func(target string) string {
		cmd := exec.CommandContext(ctx, "make", "--no-print-directory", target)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "make %s:\n%s", target, out)
		return string(out)
	}
	t.Cleanup(func() { _ = exec.Command("make", "-C", root, "--no-print-directory", "demo-stop").Run() })
	out := mk("demo")

	commands := demoCommands(t, out)
	require.NotEmpty(t, commands, "the demo prints what to try:\n%s", out)
	environ := os.Environ()
	run := func(timeout time.Duration, line string) (string, error) {
		c, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		cmd := exec.CommandContext(c, "bash", "-c", line)
		cmd.Env = environ
		cmd.WaitDelay = time.Second
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		err := cmd.Run()
		return b.String(), err
	}
	get := func(jsonpath, name string) string {
		out, err := run(time.Minute, "kubectl -n magos-demo get workspace "+name+" -o jsonpath='"+jsonpath+"'")
		require.NoError(t, err, out)
		return out
	}
	waitFor := func(what string, ok func() bool) {
		require.Eventually(t, ok, 5*time.Minute, time.Second, what)
	}
	edited := 0
	for _, line := range commands {
		t.Logf("demo: %s", line)
		switch {
		case strings.HasPrefix(line, "export "):
			for _, kv := range strings.Fields(strings.TrimPrefix(line, "export ")) {
				k, v, _ := strings.Cut(kv, "=")
				v = strings.ReplaceAll(v, "$PATH", os.Getenv("PATH"))
				environ = append(environ, k+"="+v)
			}
		case strings.HasPrefix(line, "kubectl magos ui"):
			out, _ := run(10*time.Second, line+" --no-browser")
			assert.Contains(t, out, "http://127.0.0.1", "the UI prints its address")
		case strings.Contains(line, "--watch"):
			out, _ := run(5*time.Second, line)
			assert.Contains(t, out, "hello-dev", "get --watch lists the Workspaces")
		case strings.HasPrefix(line, "$EDITOR "):
			file := strings.TrimSpace(strings.TrimPrefix(line, "$EDITOR "))
			edited++
			demoEdit(t, file, get, waitFor)
		default:
			out, err := run(6*time.Minute, line)
			require.NoError(t, err, "%s:\n%s", line, out)
			assert.NotEmpty(t, strings.TrimSpace(out), "%s prints something", line)
		}
	}
	assert.Equal(t, 2, edited, "the demo suggests two edits")
}

// demoCommands are the commands the demo prints after "Try", without their
// comments.
func demoCommands(t *testing.T, out string) []string {
	t.Helper()
	_, block, ok := strings.Cut(out, "The demo keeps running. Try")
	require.True(t, ok, "the demo says what to try:\n%s", out)
	block, _, _ = strings.Cut(block, "Run logs are in")
	comment := regexp.MustCompile(`\s{2,}#.*$`)
	var cmds []string
	for _, line := range strings.Split(block, "\n")[1:] {
		if line = strings.TrimSpace(comment.ReplaceAllString(line, "")); line != "" {
			cmds = append(cmds, line)
		}
	}
	return cmds
}

// demoEdit makes the edit the demo suggests for file and checks what the
// demo says happens.
func demoEdit(t *testing.T, file string, get func(jsonpath, name string) string, waitFor func(string, func() bool)) {
	t.Helper()
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	devRevision := get("{.status.lastApplied.revision}", "hello-dev")
	prodRuns, prodPlan := get("{.status.runs}", "hello-prod"), get("{.status.plan.id}", "hello-prod")
	switch {
	case strings.HasSuffix(file, "modules/hello/main.tf"):
		require.NoError(t, os.WriteFile(file, bytes.Replace(src, []byte(`"${var.greeting} (${var.environment})"`), []byte(`"${var.greeting}! (${var.environment})"`), 1), 0o600))
		waitFor("hello-dev applies the module's change", func() bool {
			return get("{.status.lastApplied.revision}", "hello-dev") != devRevision && get("{.status.phase}", "hello-dev") == "Idle"
		})
		waitFor("hello-prod plans it and waits for its promotion", func() bool {
			return get("{.status.plan.id}", "hello-prod") != prodPlan && get("{.status.phase}", "hello-prod") == "AwaitingPromotion"
		})
	case strings.HasSuffix(file, "envs/dev/main.tf"):
		require.NoError(t, os.WriteFile(file, append(src, []byte("\n# edited\n")...), 0o600))
		waitFor("hello-dev takes the change to its own directory", func() bool {
			return get("{.status.plan.revision}", "hello-dev") != devRevision && get("{.status.phase}", "hello-dev") == "Idle"
		})
		rev := get("{.status.plan.revision}", "hello-dev")
		waitFor("hello-prod stands at the new revision without a plan", func() bool {
			return get("{.status.plan.revision}", "hello-prod") == rev
		})
		assert.Equal(t, prodRuns, get("{.status.runs}", "hello-prod"), "prod planned nothing")
		assert.Equal(t, prodPlan, get("{.status.plan.id}", "hello-prod"), "prod's plan stands")
	default:
		t.Fatalf("the demo suggests an edit this test does not know: %s", file)
	}
}
