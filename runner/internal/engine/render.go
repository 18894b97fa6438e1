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
//
// It starts the engine itself rather than through terraform-exec, whose
// ShowPlanFile first starts the engine a second time for `version -json`
// (to learn that `show -json` exists, as it has since Terraform 0.12) and
// then decodes and validates the whole JSON the runner keeps as bytes. A
// plan and an apply each render once, so that is two engine starts and two
// decodes per Workspace run saved; the process is started the way
// terraform-exec starts every command (its own process group, killed with
// the runner, interrupted when ctx ends and killed shutdownWait later).
func (e *Engine) PlanJSON(ctx context.Context, planFile string) ([]byte, error) {
	var stdout bytes.Buffer
	stderr := &boundedBuffer{max: maxStderr}
	cmd := exec.CommandContext(ctx, e.binary, "show", "-json", "-no-color", planFile)
	cmd.Dir = e.dir
	cmd.Env = automationEnv(os.Environ())
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(e.stderr, stderr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = e.shutdownWait
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		return nil, fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return stdout.Bytes(), nil
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
