package command

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/ops"
)

// writeFile writes content to a file in a temp dir and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// TestPolicyTestReadsPolicyFiles: every document of a file is a policy
// sent to the engine as JSON; anything but a ValidatingPolicy is a usage
// error before an engine is sought.
func TestPolicyTestReadsPolicyFiles(t *testing.T) {
	policies, err := ops.ReadPolicies(writeFile(t, "two.yaml", `
apiVersion: policies.kyverno.io/v1
kind: ValidatingPolicy
metadata: {name: a}
---
---
apiVersion: policies.kyverno.io/v1beta1
kind: NamespacedValidatingPolicy
metadata: {name: b, namespace: team}
`))
	require.NoError(t, err)
	require.Len(t, policies, 2)
	assert.JSONEq(t, `{"apiVersion":"policies.kyverno.io/v1","kind":"ValidatingPolicy","metadata":{"name":"a"}}`, string(policies[0]))

	plan := writeFile(t, "plan.json", `{"format_version":"1.2"}`)
	code, _, stderr := run("policy", "test", plan, "--policy", plan)
	assert.Equal(t, failure.ExitUsage, code, "a file that is not a policy: %s", stderr)
	code, _, stderr = run("policy", "test", plan, "--policy", writeFile(t, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"))
	assert.Equal(t, failure.ExitUsage, code, stderr)
	assert.Contains(t, stderr, `ConfigMap "x" is not a ValidatingPolicy`)
}

// TestPolicyTestNamesTheMissingEngine: without a policy engine, policy
// test says which binary it needs and where it looks.
func TestPolicyTestNamesTheMissingEngine(t *testing.T) {
	t.Setenv("MAGOS_POLICY_ENGINE", "")
	t.Setenv("PATH", t.TempDir())
	plan := writeFile(t, "plan.json", `{"format_version":"1.2"}`)
	policy := writeFile(t, "p.yaml", "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata: {name: a}\n")
	code, _, stderr := run("policy", "test", plan, "--policy", policy)
	assert.Equal(t, failure.ExitUsage, code, stderr)
	assert.Contains(t, stderr, "policy test needs the policy engine, magos-policy-engine")

	code, _, stderr = run("policy", "test", plan, "--policy", policy, "--engine", filepath.Join(t.TempDir(), "nothing"))
	assert.Equal(t, failure.ExitUsage, code, stderr)
	assert.Contains(t, stderr, "starting the policy engine")
}
