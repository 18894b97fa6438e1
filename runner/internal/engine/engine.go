package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// Engine runs one engine binary in one configuration directory. Its
// methods must not be called concurrently.
type Engine struct {
	tf           *tfexec.Terraform
	binary, dir  string
	shutdownWait time.Duration
	stdout       io.Writer
	stderr       io.Writer
}

// New returns an Engine for binary working in dir, passing the engine's
// output to stdout and stderr (which should mask secrets). When the run's
// context ends, the engine is interrupted (SIGINT: it stops starting
// operations, waits for those in flight, writes the state and releases the
// lock) and killed if it has not exited after shutdownWait.
func New(binary, dir string, shutdownWait time.Duration, stdout, stderr io.Writer) (*Engine, error) {
	tf, err := tfexec.NewTerraform(dir, binary)
	if err != nil {
		return nil, err
	}
	tf.SetStdout(stdout)
	tf.SetStderr(stderr)
	if err := tf.SetWaitDelay(shutdownWait); err != nil {
		return nil, err
	}
	return &Engine{tf: tf, binary: binary, dir: dir, shutdownWait: shutdownWait, stdout: stdout, stderr: stderr}, nil
}

// PrepareEnv sets the process environment the engine inherits: HOME, TMPDIR
// and a plugin cache under workDir (the only writable place in the runner's
// pod), no update checks, git that fails instead of prompting for
// credentials it was not given (a git:: module source), and extra (e.g. the
// state backend's TF_HTTP_*).
// terraform-exec passes the process environment on, which is how TF_VAR_*
// variables from the pod spec reach the engine; it sets TF_IN_AUTOMATION.
func PrepareEnv(workDir string, extra map[string]string) error {
	home := filepath.Join(workDir, "home")
	tmp := filepath.Join(workDir, "tmp")
	cache := filepath.Join(workDir, "plugin-cache")
	for _, d := range []string{home, tmp, cache} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return err
		}
	}
	env := map[string]string{
		"HOME":                home,
		"TMPDIR":              tmp,
		"TF_PLUGIN_CACHE_DIR": cache,
		"CHECKPOINT_DISABLE":  "1",
		"GIT_TERMINAL_PROMPT": "0",
	}
	for k, v := range extra {
		env[k] = v
	}
	for k, v := range env {
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("setting %s: %w", k, err)
		}
	}
	return nil
}

// PlanOptions shape a plan.
type PlanOptions struct {
	// Destroy plans the destroy of everything in the state (plan -destroy).
	Destroy bool
	// Targets limit the plan to these addresses (-target).
	Targets []string
	// Replace are resource instances the plan replaces (-replace).
	Replace []string
	// Printed, if set, also receives what the engine prints on stdout
	// while it plans (unmasked: the caller masks what it keeps).
	Printed io.Writer
}

// Plan plans into the file out and reports whether the plan has changes
// (resources or outputs).
func (e *Engine) Plan(ctx context.Context, out string, o PlanOptions) (bool, error) {
	opts := []tfexec.PlanOption{tfexec.Out(out), tfexec.Destroy(o.Destroy)}
	for _, a := range o.Targets {
		opts = append(opts, tfexec.Target(a))
	}
	for _, a := range o.Replace {
		opts = append(opts, tfexec.Replace(a))
	}
	if o.Printed != nil {
		e.tf.SetStdout(io.MultiWriter(e.stdout, o.Printed))
		defer e.tf.SetStdout(e.stdout)
	}
	return e.tf.Plan(ctx, opts...)
}

// PlanText returns `show -no-color` of the plan file: the plan rendered
// for people, sensitive values redacted by the engine. It is not passed to
// stdout: the plan run has printed the same plan already.
func (e *Engine) PlanText(ctx context.Context, planFile string) (string, error) {
	var stdout strings.Builder
	if err := e.command(ctx, &stdout, "show", "-no-color", planFile); err != nil {
		return "", err
	}
	return stdout.String(), nil
}

// Apply applies the saved plan file.
func (e *Engine) Apply(ctx context.Context, planFile string) error {
	return e.tf.Apply(ctx, tfexec.DirOrPlan(planFile))
}

// Destroy destroys everything in the state, without asking and without a
// saved plan.
func (e *Engine) Destroy(ctx context.Context) error {
	return e.tf.Destroy(ctx)
}

// Outputs returns the root module's outputs with their values. They are
// not passed to stdout.
func (e *Engine) Outputs(ctx context.Context) (map[string]tfexec.OutputMeta, error) {
	e.tf.SetStdout(io.Discard)
	defer e.tf.SetStdout(e.stdout)
	return e.tf.Output(ctx)
}
