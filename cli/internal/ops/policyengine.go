package ops

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/cli/internal/failure"
)

// policyEngineName is the policy engine's file name in a release and on
// the PATH.
const policyEngineName = "magos-policy-engine"

// FindPolicyEngine is $MAGOS_POLICY_ENGINE, else magos-policy-engine in
// the directory of this executable, else on the PATH.
func FindPolicyEngine() (string, error) {
	if p := os.Getenv("MAGOS_POLICY_ENGINE"); p != "" {
		return p, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), policyEngineName)
		if _, err := os.Stat(beside); err == nil {
			return beside, nil
		}
	}
	if p, err := exec.LookPath(policyEngineName); err == nil {
		return p, nil
	}
	return "", failure.Usage("policy test needs the policy engine, %s: put the release's %s_<version>_<os>_<arch> beside kubectl-magos or on the PATH as %s, or name it with --engine or MAGOS_POLICY_ENGINE",
		policyEngineName, policyEngineName, policyEngineName)
}

// Evaluate has the engine at path evaluate plan against req's policies
// (the policy engine protocol, package policyprotocol): one request, one
// verdict, then the engine exits as its stdin closes.
func Evaluate(ctx context.Context, path string, req policyprotocol.Request, plan []byte) (policyprotocol.Verdict, error) {
	var in bytes.Buffer
	if err := policyprotocol.WriteRequest(&in, req, plan); err != nil {
		return policyprotocol.Verdict{}, err
	}
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &in, &out, &stderr
	if err := cmd.Start(); err != nil {
		return policyprotocol.Verdict{}, failure.Usage("starting the policy engine %s: %v", path, err)
	}
	runErr := cmd.Wait()
	v, err := policyprotocol.ReadResponse(bufio.NewReader(&out))
	if err != nil {
		return v, failure.Failed("the policy engine %s gave no verdict (%v): %s", path, errors.Join(runErr, err), strings.TrimSpace(stderr.String()))
	}
	return v, nil
}

// ReadPolicies reads every document of a YAML or JSON file as the JSON of
// a ValidatingPolicy or NamespacedValidatingPolicy.
func ReadPolicies(file string) ([]json.RawMessage, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return policyprotocol.PoliciesFromYAML(data)
}
