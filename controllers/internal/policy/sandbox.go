package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/magos-dev/magos/apis/policyprotocol"
)

// sandboxProbeTimeout bounds one run of the engine's sandbox report.
const sandboxProbeTimeout = 30 * time.Second

// ProbeSandbox runs the policy engine at path once to learn what its
// sandbox takes from it on this kernel, as the engine applies it before it
// serves (policyprotocol.SandboxStatusCommand).
func ProbeSandbox(ctx context.Context, path string) (policyprotocol.Sandbox, error) {
	if path == "" {
		return policyprotocol.Sandbox{}, errors.New("no policy engine binary is configured (--policy-engine-path)")
	}
	ctx, cancel := context.WithTimeout(ctx, sandboxProbeTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, policyprotocol.SandboxStatusCommand)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return policyprotocol.Sandbox{}, fmt.Errorf("running %s %s: %w: %s", path, policyprotocol.SandboxStatusCommand, err, strings.TrimSpace(stderr.String()))
	}
	s, err := policyprotocol.ReadSandbox(&stdout)
	if err != nil {
		return policyprotocol.Sandbox{}, fmt.Errorf("%s %s: %w", path, policyprotocol.SandboxStatusCommand, err)
	}
	return s, nil
}
