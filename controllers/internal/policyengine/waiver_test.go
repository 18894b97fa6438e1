package policyengine

import (
	"bufio"
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policy/policytest"
)

// exception is a PolicyException in team-a naming the ValidatingPolicy
// policyName, with matchConditions conditions (YAML list, or "").
func exception(t *testing.T, name, policyName, conditions string) policy.Exception {
	t.Helper()
	doc := `
apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata:
  name: ` + name + `
  namespace: team-a
spec:
  policyRefs:
  - name: ` + policyName + `
    kind: ValidatingPolicy
`
	if conditions != "" {
		doc += "  matchConditions:\n" + conditions
	}
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	e, err := policy.ExceptionFromUnstructured(u)
	require.NoError(t, err)
	return e
}

// TestEvaluateWaivers: a PolicyException that refers to a denying policy
// and whose matchConditions hold on the plan waives the denial (the plan
// passes, the violation is kept and names the exception); one whose
// conditions do not hold, or that names another policy, waives nothing;
// an exception that cannot be evaluated waives nothing and says why; a
// cluster policy that does not allow waivers is not waived. The same
// holds through the engine protocol.
func TestEvaluateWaivers(t *testing.T) {
	e, err := NewEvaluator()
	require.NoError(t, err)
	p := plan(t, tfUntagged)
	policies := func(waivable string) []policy.Policy {
		ps := policiesOf(jsonPolicySpec{"require-env", policytest.SpecRequireEnv}, jsonPolicySpec{"fine", policytest.SpecAlwaysPass})(t)
		for _, p := range ps {
			if waivable != "" {
				p.Object.SetAnnotations(map[string]string{magosv1.WaivableAnnotation: waivable})
			}
		}
		return ps
	}
	denying := func() []policy.Policy { return policies("true") }
	v := e.Evaluate(context.Background(), denying(), p)
	require.False(t, v.Passed, v.Message)

	cases := []struct {
		name       string
		policies   []policy.Policy
		exceptions []policy.Exception
		waivedBy   []string
		message    string
	}{
		{name: "a cluster policy that does not allow waivers is not waived", policies: policies(""),
			exceptions: []policy.Exception{exception(t, "waive", "require-env", "")}},
		{name: "nor one that refuses them", policies: policies("false"),
			exceptions: []policy.Exception{exception(t, "waive", "require-env", "")}},
		{name: "an exception for the policy waives it",
			exceptions: []policy.Exception{exception(t, "waive", "require-env", "")}, waivedBy: []string{"team-a/waive"}},
		{name: "matchConditions that hold on the plan waive it",
			exceptions: []policy.Exception{exception(t, "web-only", "require-env",
				"  - name: has-web\n    expression: \"object.resource_changes.exists(rc, rc.address == 'terraform_data.web')\"\n")},
			waivedBy: []string{"team-a/web-only"}},
		{name: "matchConditions that do not hold waive nothing",
			exceptions: []policy.Exception{exception(t, "db-only", "require-env",
				"  - name: has-db\n    expression: \"object.resource_changes.exists(rc, rc.address == 'terraform_data.db')\"\n")}},
		{name: "an exception for another policy waives nothing",
			exceptions: []policy.Exception{exception(t, "other", "fine", "")}},
		{name: "an exception that errors waives nothing and says why",
			exceptions: []policy.Exception{exception(t, "broken", "require-env",
				"  - name: broken\n    expression: \"object.no_such_field.x == 1\"\n")},
			message: "PolicyExceptions not applied"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			gate := tc.policies
			if gate == nil {
				gate = denying()
			}
			policies := policy.WithWaivers(gate, tc.exceptions)
			for _, got := range []policyprotocol.Verdict{e.Evaluate(context.Background(), policies, p), viaProtocol(t, policies, p)} {
				require.False(t, got.Errored, got.Message)
				require.Len(t, got.Violations, 1, got.Message)
				viol := got.Violations[0]
				assert.Equal(t, "require-env", viol.Policy)
				assert.Equal(t, policyprotocol.ActionDeny, viol.Action, "a waived denial is still reported as one")
				assert.Equal(t, tc.waivedBy, viol.WaivedBy)
				assert.Equal(t, len(tc.waivedBy) > 0, got.Passed, got.Message)
				if len(tc.waivedBy) > 0 {
					assert.Contains(t, got.Message, "1 denial waived")
					assert.Contains(t, got.Message, "waived by team-a/")
				}
				assert.Contains(t, viol.Message, tc.message)
			}
		})
	}
}

// viaProtocol evaluates policies (with their exceptions) through one
// request and response of the policy engine protocol.
func viaProtocol(t *testing.T, policies []policy.Policy, planJSON []byte) policyprotocol.Verdict {
	t.Helper()
	var in, out bytes.Buffer
	require.NoError(t, policy.WriteEngineRequest(&in, policies, planJSON, 0))
	require.NoError(t, Serve(context.Background(), &in, &out))
	v, err := policyprotocol.ReadResponse(bufio.NewReader(&out))
	require.NoError(t, err)
	return v
}
