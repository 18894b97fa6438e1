package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// maxStderr bounds the engine's stderr kept for an error message; all of
// it still reaches the run's log.
const maxStderr = 64 << 10

// PlanJSON returns `show -json` of the plan file, exactly as the engine
// printed it. It is not passed to stdout: it is large and holds values.
// Started directly (see command), it costs one engine start, where
// terraform-exec's ShowPlanFile costs two and decodes the JSON the runner
// keeps as bytes.
func (e *Engine) PlanJSON(ctx context.Context, planFile string) ([]byte, error) {
	var stdout bytes.Buffer
	if err := e.command(ctx, &stdout, "show", "-json", "-no-color", planFile); err != nil {
		return nil, err
	}
	return stdout.Bytes(), nil
}

// Init runs init, its output to the run's stdout.
func (e *Engine) Init(ctx context.Context) error {
	return e.command(ctx, e.stdout, "init", "-input=false", "-no-color")
}

// command runs the engine with args in the configuration directory,
// stdout to stdout and stderr to the run's stderr. A failure carries the
// engine's stderr (bounded), as terraform-exec's errors do.
//
// It starts the engine itself rather than through terraform-exec, which
// starts the engine a second time for `version -json` before its first
// init or show of a Terraform object, to learn which flags the engine
// takes: one engine start per Job that OpenTofu's own init, plan, apply
// do not pay. The process is started the way terraform-exec starts every
// command: its own process group, killed with the runner, interrupted when
// ctx ends and killed shutdownWait later.
func (e *Engine) command(ctx context.Context, stdout io.Writer, args ...string) error {
	stderr := &boundedBuffer{max: maxStderr}
	cmd := exec.CommandContext(ctx, e.binary, args...)
	cmd.Dir = e.dir
	cmd.Env = automationEnv(os.Environ())
	cmd.Stdout = stdout
	cmd.Stderr = io.MultiWriter(e.stderr, stderr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = e.shutdownWait
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return nil
}

// automationEnv is environ as terraform-exec passes it to the engine: run
// in automation, engine logging off (it would go to stderr), and the
// workspace never chosen by the environment.
func automationEnv(environ []string) []string {
	env := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "TF_IN_AUTOMATION", "TF_WORKSPACE", "TF_LOG", "TF_LOG_CORE", "TF_LOG_PATH", "TF_LOG_PROVIDER":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "TF_IN_AUTOMATION=1")
}

// StartFailed reports whether err is the engine binary failing to start at
// all (not executable, not a program for this machine), as opposed to the
// engine running and failing.
func StartFailed(err error) bool {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) && pathErr.Op == "fork/exec" {
		return true
	}
	var execErr *exec.Error
	return errors.As(err, &execErr)
}

// boundedBuffer keeps the first max bytes written to it and accepts the
// rest unkept.
type boundedBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string { return b.buf.String() }
