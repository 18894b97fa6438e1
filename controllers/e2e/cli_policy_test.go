package e2e

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/tools/harness/testenv"
)

// TestPolicyTestRunsThePolicyEngine: kubectl magos policy test, a module
// that links none of Kyverno, evaluates with the policy engine the
// release ships beside it (magos-policy-engine in its own directory), as
// the policy gate does; --engine names another.
func TestPolicyTestRunsThePolicyEngine(t *testing.T) {
	env.Require(t)
	dir := t.TempDir()
	cli := filepath.Join(dir, "kubectl-magos")
	copyFile(t, testenv.CLI.Build(t), cli)
	engine := testenv.PolicyEngine.Build(t)
	require.NoError(t, os.Symlink(engine, filepath.Join(dir, "magos-policy-engine")))

	run := func(args ...string) (int, string) {
		cmd := exec.Command(cli, args...)
		cmd.Env = []string{"PATH=" + t.TempDir(), "HOME=" + t.TempDir()}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			require.NoError(t, err)
		}
		return cmd.ProcessState.ExitCode(), out.String()
	}
	plan := writeTestFile(t, "plan.json", `{"format_version":"1.2","resource_changes":[
		{"address":"terraform_data.greeting","type":"terraform_data","change":{"actions":["create"]}}]}`)
	cookbook := filepath.Join(env.Root, "controllers", "internal", "policyengine", "testdata", "cookbook", "forbidden-resource-types.yaml")

	code, out := run("policy", "test", plan, "--policy", cookbook)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "FAILED")
	assert.Contains(t, out, "forbidden-resource-types [Deny]: resource types not allowed here: terraform_data.greeting")

	allow := writeTestFile(t, "allow.yaml", `
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: only-terraform-data
spec:
  evaluation:
    mode: JSON
  validationActions: [Deny]
  validations:
    - expression: "object.resource_changes.all(rc, rc.type == 'terraform_data')"
      message: only terraform_data
---
`)
	code, out = run("policy", "test", plan, "--policy", allow)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "PASSED")

	broken := writeTestFile(t, "broken.yaml", `
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata:
  name: broken
spec:
  evaluation:
    mode: JSON
  validations:
    - expression: "object.no_such_field +"
`)
	code, out = run("policy", "test", plan, "--policy", broken)
	assert.Equal(t, 1, code, "a policy the engine cannot compile fails closed: %s", out)
	assert.Contains(t, out, "FAILED")

	require.NoError(t, os.Remove(filepath.Join(dir, "magos-policy-engine")))
	code, out = run("policy", "test", plan, "--policy", allow)
	assert.Equal(t, 2, code, out)
	assert.Contains(t, out, "needs the policy engine, magos-policy-engine")
	code, out = run("policy", "test", plan, "--policy", allow, "--engine", engine)
	assert.Equal(t, 0, code, out)
}

// writeTestFile writes content to name in a new temporary directory.
func writeTestFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// copyFile copies the executable from to to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, errors.Join(err, out.Close()))
}
