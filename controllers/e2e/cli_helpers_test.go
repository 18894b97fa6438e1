package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/harness/testenv"
)

// cliResult is what one kubectl-magos invocation printed and its exit code.
type cliResult struct {
	code           int
	stdout, stderr string
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// cliCommand is kubectl-magos with the admin kubeconfig and the stack's
// namespace, then args.
func (s *stack) cliCommand(ctx context.Context, stdin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, testenv.CLI.Build(s.t), append([]string{"--kubeconfig", env.Kubeconfig, "-n", s.ns}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "MAGOS_POLICY_ENGINE="+testenv.PolicyEngine.Build(s.t))
	return cmd
}

// magos runs kubectl-magos to its end (at most five minutes).
func (s *stack) magos(args ...string) cliResult {
	s.t.Helper()
	return s.magosWithInput("", args...)
}

// magosWithInput runs kubectl-magos with stdin.
func (s *stack) magosWithInput(stdin string, args ...string) cliResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := s.cliCommand(ctx, stdin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(s.t, err, "running kubectl-magos %v", args)
	}
	return cliResult{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errOut.String()}
}

// magosInBackground starts kubectl-magos and returns what it prints so
// far; it is stopped when the test ends.
func (s *stack) magosInBackground(args ...string) *testenv.LogBuffer {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := s.cliCommand(ctx, "", args...)
	out := &testenv.LogBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(s.t, cmd.Start())
	s.t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	return out
}
