package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummarize(t *testing.T) {
	got, err := summarize([]byte(`{"format_version":"1.2","resource_changes":[
		{"address":"a.new","change":{"actions":["create"]}},
		{"address":"a.same","change":{"actions":["no-op"]}},
		{"address":"a.edit","change":{"actions":["update"]}},
		{"address":"a.gone","change":{"actions":["delete"]}},
		{"address":"a.swap","change":{"actions":["delete","create"]}},
		{"address":"a.\u001b[31mred","change":{"actions":["create","delete"]}}]}`))
	require.NoError(t, err)
	assert.Equal(t, "Resource changes:\n  + a.new\n  ~ a.edit\n  - a.gone\n  -/+ a.swap\n  +/- a.[31mred\n", got)

	got, err = summarize([]byte(`{"format_version":"1.2","resource_changes":[{"address":"a","change":{"actions":["no-op"]}}]}`))
	require.NoError(t, err)
	assert.Equal(t, "No changes.", got)

	_, err = summarize([]byte(`not json`))
	assert.Error(t, err)
}

func TestPrintableDropsControlCharacters(t *testing.T) {
	assert.Equal(t, "a\tb\n[1mc", printable("a\tb\n\x1b[1mc\x07\u009b"))
}

// writeFile writes content to a file in a temp dir and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestPolicyTest(t *testing.T) {
	plan := writeFile(t, "plan.json", `{"format_version":"1.2","resource_changes":[
		{"address":"terraform_data.greeting","type":"terraform_data","change":{"actions":["create"]}}]}`)
	cookbook := filepath.Join("..", "policyengine", "testdata", "cookbook", "forbidden-resource-types.yaml")

	code, out, stderr := run("policy", "test", plan, "--policy", cookbook)
	assert.Equal(t, ExitFailure, code, stderr)
	assert.Contains(t, out, "FAILED")
	assert.Contains(t, out, "forbidden-resource-types [Deny]: resource types not allowed here: terraform_data.greeting")

	allow := writeFile(t, "allow.yaml", `
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
	code, out, stderr = run("policy", "test", plan, "--policy", allow)
	assert.Equal(t, ExitOK, code, stderr)
	assert.Contains(t, out, "PASSED")

	code, _, stderr = run("policy", "test", plan, "--policy", plan)
	assert.Equal(t, ExitUsage, code, "a file that is not a policy: %s", stderr)
}
