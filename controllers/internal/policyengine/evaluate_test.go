package policyengine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policy/policytest"
)

// TestEvaluate pins the verdicts Kyverno's engine gives on real plans.
func TestEvaluate(t *testing.T) {
	e, err := NewEvaluator()
	require.NoError(t, err)

	tests := []struct {
		name     string
		plan     func(testing.TB) []byte
		policies func(testing.TB) []policy.Policy
		passed   bool
		errored  bool
		// violations are policy/action/validation/message of each violation.
		violations []policyprotocol.Violation
		// message parts the verdict message must contain.
		message []string
		// absent parts the verdict message must not contain.
		absent []string
	}{
		{
			name:     "a passing plan",
			plan:     planOf(tfTagged),
			policies: policiesOf(jsonPolicySpec{"require-env", policytest.SpecRequireEnv}),
			passed:   true,
			message:  []string{"Plan passed 1 policy"},
		},
		{
			name:     "a failing plan gives the policy's message",
			plan:     planOf(tfUntagged),
			policies: policiesOf(jsonPolicySpec{"require-env", policytest.SpecRequireEnv}),
			violations: []policyprotocol.Violation{
				{Policy: "require-env", Validation: 1, Message: "every resource needs an env tag", Action: policyprotocol.ActionDeny},
			},
			message: []string{"Plan denied by 1 of 1 policy: require-env [Deny]: every resource needs an env tag"},
		},
		{
			name:     "messageExpression and variables",
			plan:     planOf(tfUntagged),
			policies: policiesOf(jsonPolicySpec{"require-env-expr", policytest.SpecRequireEnvExpr}),
			violations: []policyprotocol.Violation{
				{Policy: "require-env-expr", Validation: 0, Message: "env tag missing on terraform_data.bare, terraform_data.web", Action: policyprotocol.ActionDeny},
			},
		},
		{
			name:     "an Audit-only violation is recorded but passes",
			plan:     planOf(tfUntagged),
			policies: policiesOf(jsonPolicySpec{"audit-env", policytest.WithActions(policytest.SpecRequireEnv, "[Audit]")}),
			passed:   true,
			violations: []policyprotocol.Violation{
				{Policy: "audit-env", Validation: 1, Message: "every resource needs an env tag", Action: policyprotocol.ActionAudit},
			},
			message: []string{"Plan passed 1 policy with 1 non-blocking violation: audit-env [Audit]", "audit-env [Audit]"},
		},
		{
			name:     "a Warn violation is recorded but passes",
			plan:     planOf(tfUntagged),
			policies: policiesOf(jsonPolicySpec{"warn-env", policytest.WithActions(policytest.SpecRequireEnv, "[Warn, Audit]")}),
			passed:   true,
			violations: []policyprotocol.Violation{
				{Policy: "warn-env", Validation: 1, Message: "every resource needs an env tag", Action: policyprotocol.ActionWarn},
			},
		},
		{
			name: "Deny wins over Audit, listed first",
			plan: planOf(tfUntagged),
			policies: policiesOf(
				jsonPolicySpec{"a-audit", policytest.WithActions(policytest.SpecRequireEnv, "[Audit]")},
				jsonPolicySpec{"z-deny", policytest.WithActions(policytest.SpecRequireEnv, "[Deny, Audit]")},
			),
			violations: []policyprotocol.Violation{
				{Policy: "z-deny", Validation: 1, Message: "every resource needs an env tag", Action: policyprotocol.ActionDeny},
				{Policy: "a-audit", Validation: 1, Message: "every resource needs an env tag", Action: policyprotocol.ActionAudit},
			},
			message: []string{"Plan denied by 1 of 2 policies: z-deny [Deny]"},
		},
		{
			name:     "a policy that does not compile errors and blocks",
			plan:     planOf(tfTagged),
			policies: policiesOf(jsonPolicySpec{"broken", policytest.SpecBadCEL}, jsonPolicySpec{"fine", policytest.SpecAlwaysPass}),
			errored:  true,
			message:  []string{`policy "broken": does not compile: spec.validations[0].expression: Invalid value`, "Syntax error"},
			absent:   []string{`policy "fine"`},
		},
		{
			name:     "a runtime error errors and blocks",
			plan:     planOf(tfTagged),
			policies: policiesOf(jsonPolicySpec{"runtime", policytest.SpecRuntimeError}),
			errored:  true,
			message:  []string{`policy "runtime": spec.validations[0]: no such key: no_such_field`},
		},
		{
			name:     "a matchCondition error blocks even with failurePolicy Ignore",
			plan:     planOf(tfTagged),
			policies: policiesOf(jsonPolicySpec{"bad-match", policytest.SpecMatchConditionError}),
			errored:  true,
			message:  []string{`policy "bad-match": spec.matchConditions:`, "no such key: no_such_field"},
		},
		{
			name:     "matchConditions exclude a plan",
			plan:     planOf(tfEnv("dev")),
			policies: policiesOf(jsonPolicySpec{"prod-only", policytest.SpecProdOnly}),
			passed:   true,
			message:  []string{"Plan passed 1 policy (1 not applicable by matchConditions)"},
		},
		{
			name:     "matchConditions select a plan",
			plan:     planOf(tfEnv("prod")),
			policies: policiesOf(jsonPolicySpec{"prod-only", policytest.SpecProdOnly}),
			violations: []policyprotocol.Violation{
				{Policy: "prod-only", Validation: 0, Message: "prod changes need a change ticket", Action: policyprotocol.ActionDeny},
			},
		},
		{
			name:     "errors never quote plan values",
			plan:     planOf(tfSecret),
			policies: policiesOf(jsonPolicySpec{"overload", policytest.SpecPasswordOverload}),
			errored:  true,
			message:  []string{`policy "overload": spec.validations[0]:`},
			absent:   []string{"s3cr3t-hunter2", "resource_changes\":"},
		},
		{
			name:     "no policy selected passes",
			plan:     planOf(tfUntagged),
			policies: policiesOf(),
			passed:   true,
			message:  []string{"No policy applied"},
		},
		{
			name:     "plan JSON that cannot be parsed errors",
			plan:     func(testing.TB) []byte { return []byte(`{"format_version": "1.2", `) },
			policies: policiesOf(jsonPolicySpec{"fine", policytest.SpecAlwaysPass}),
			errored:  true,
			message:  []string{"plan JSON cannot be parsed"},
		},
		{
			name:     "JSON that is not a plan errors",
			plan:     func(testing.TB) []byte { return []byte(`{"resources": []}`) },
			policies: policiesOf(),
			errored:  true,
			message:  []string{"has no format_version"},
		},
		{
			name:     "JSON null errors",
			plan:     func(testing.TB) []byte { return []byte(`null`) },
			policies: policiesOf(jsonPolicySpec{"fine", policytest.SpecAlwaysPass}),
			errored:  true,
			message:  []string{"plan JSON is empty"},
		},
		{
			name: "a Kubernetes-mode policy errors",
			plan: planOf(tfTagged),
			policies: func(tb testing.TB) []policy.Policy {
				p := policytest.JSONPolicy(tb, "k8s-mode", policytest.SpecAlwaysPass)
				p.Object.GetValidatingPolicySpec().EvaluationConfiguration.Mode = "Kubernetes"
				return []policy.Policy{p}
			},
			errored: true,
			message: []string{`policy "k8s-mode": spec.evaluation.mode is not JSON`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			policies := tt.policies(t)
			v := e.Evaluate(context.Background(), policies, tt.plan(t))
			t.Log(v.Message)
			assert.Equal(t, tt.passed, v.Passed, v.Message)
			assert.Equal(t, tt.errored, v.Errored, v.Message)
			if tt.errored {
				assert.False(t, v.Passed, "an errored verdict never passes")
			}
			assert.Equal(t, tt.violations, v.Violations)
			for _, part := range tt.message {
				assert.Contains(t, v.Message, part)
			}
			for _, part := range tt.absent {
				assert.NotContains(t, v.Message, part)
			}
			assert.NotContains(t, v.Message, "\n")
		})
	}
}

// TestEvaluateListsEvaluatedPolicies: a verdict names every policy, sorted,
// once, namespaced ones as namespace/name.
func TestEvaluateListsEvaluatedPolicies(t *testing.T) {
	e, err := NewEvaluator()
	require.NoError(t, err)
	nvpol := policytest.DecodePolicies(t, []byte(`
apiVersion: policies.kyverno.io/v1beta1
kind: NamespacedValidatingPolicy
metadata:
  name: team
  namespace: team-a
spec:
  evaluation:
    mode: JSON
  validations:
  - expression: "true"
`))
	policies := append(policiesOf(
		jsonPolicySpec{"zeta", policytest.SpecAlwaysPass},
		jsonPolicySpec{"alpha", policytest.SpecAlwaysPass},
		jsonPolicySpec{"alpha", policytest.SpecAlwaysPass},
	)(t), nvpol...)
	v := e.Evaluate(context.Background(), policies, plan(t, tfTagged))
	assert.True(t, v.Passed, v.Message)
	assert.Equal(t, []string{"alpha", "team-a/team", "zeta"}, v.Policies)
}

// TestEvaluateCancelled: a context that is already done blocks apply.
func TestEvaluateCancelled(t *testing.T) {
	e, err := NewEvaluator()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v := e.Evaluate(ctx, policiesOf(jsonPolicySpec{"fine", policytest.SpecAlwaysPass})(t), plan(t, tfTagged))
	assert.False(t, v.Passed)
	assert.True(t, v.Errored)
	assert.Contains(t, v.Message, "context canceled")
}

// TestEvaluateRecompilesChangedPolicy: the compiled-policy cache follows a
// policy's spec.
func TestEvaluateRecompilesChangedPolicy(t *testing.T) {
	e, err := NewEvaluator()
	require.NoError(t, err)
	p := plan(t, tfUntagged)
	v := e.Evaluate(context.Background(), policiesOf(jsonPolicySpec{"evolving", policytest.SpecAlwaysPass})(t), p)
	require.True(t, v.Passed, v.Message)
	v = e.Evaluate(context.Background(), policiesOf(jsonPolicySpec{"evolving", policytest.SpecRequireEnv})(t), p)
	require.False(t, v.Passed, v.Message)
	v = e.Evaluate(context.Background(), policiesOf(jsonPolicySpec{"evolving", policytest.SpecBadCEL})(t), p)
	require.True(t, v.Errored, v.Message)
	v = e.Evaluate(context.Background(), policiesOf(jsonPolicySpec{"evolving", policytest.SpecAlwaysPass})(t), p)
	require.True(t, v.Passed, v.Message)
}

// jsonPolicySpec names a JSON-mode policy and its spec.
type jsonPolicySpec struct{ name, spec string }

// policiesOf builds the JSON-mode ValidatingPolicies specs describe.
func policiesOf(specs ...jsonPolicySpec) func(testing.TB) []policy.Policy {
	return func(tb testing.TB) []policy.Policy {
		out := []policy.Policy{}
		for _, s := range specs {
			out = append(out, policytest.JSONPolicy(tb, s.name, s.spec))
		}
		return out
	}
}
