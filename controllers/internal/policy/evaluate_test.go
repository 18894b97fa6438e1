package policy

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Policies the evaluation tests combine, as the lines of spec after
// `evaluation:`.
const (
	specRequireEnv = `
validationActions: [Deny]
variables:
- name: changed
  expression: "object.resource_changes.filter(rc, 'create' in rc.change.actions)"
validations:
- expression: "object.format_version != ''"
  message: never fails
- expression: "variables.changed.all(rc, rc.change.after.?input.?tags[?'env'].hasValue())"
  message: every resource needs an env tag
`
	specRequireEnvExpr = `
variables:
- name: missing
  expression: >-
    object.resource_changes.filter(rc,
      !rc.change.after.?input.?tags[?'env'].hasValue()).map(rc, rc.address)
validations:
- expression: "size(variables.missing) == 0"
  messageExpression: "'env tag missing on ' + variables.missing.join(', ')"
`
	// specProdOnly fails every plan whose env variable is prod, and
	// does not apply to others.
	specProdOnly = `
matchConditions:
- name: prod-only
  expression: "object.?variables.?env.?value.orValue('') == 'prod'"
validations:
- expression: "false"
  message: prod changes need a change ticket
`
	specBadCEL = `
validations:
- expression: "object.resource_changes.all(rc, rc.type ==)"
  message: broken
`
	specRuntimeError = `
validations:
- expression: "object.no_such_field == 'x'"
  message: unreachable
`
	specMatchConditionError = `
failurePolicy: Ignore
matchConditions:
- name: broken
  expression: "object.no_such_field == 'x'"
validations:
- expression: "true"
`
	// specPasswordOverload errors on a plan value without quoting it.
	specPasswordOverload = `
validations:
- expression: "object.resource_changes.all(rc, rc.change.after.input.password > 5)"
`
	specAlwaysPass = `
validations:
- expression: "size(object.resource_changes) >= 0"
`
)

func withActions(spec string, actions string) string {
	return strings.Replace(spec, "validationActions: [Deny]", "validationActions: "+actions, 1)
}

// TestEvaluate pins the verdicts Kyverno's engine gives on real plans.
func TestEvaluate(t *testing.T) {
	e, err := NewEvaluator()
	require.NoError(t, err)

	tests := []struct {
		name     string
		plan     func(testing.TB) []byte
		policies func(testing.TB) []Policy
		passed   bool
		errored  bool
		// violations are policy/action/validation/message of each violation.
		violations []Violation
		// message parts the verdict message must contain.
		message []string
		// absent parts the verdict message must not contain.
		absent []string
	}{
		{
			name:     "a passing plan",
			plan:     planOf(tfTagged),
			policies: policiesOf(jsonPolicySpec{"require-env", specRequireEnv}),
			passed:   true,
			message:  []string{"Plan passed 1 policy"},
		},
		{
			name:     "a failing plan gives the policy's message",
			plan:     planOf(tfUntagged),
			policies: policiesOf(jsonPolicySpec{"require-env", specRequireEnv}),
			violations: []Violation{
				{Policy: "require-env", Validation: 1, Message: "every resource needs an env tag", Action: ActionDeny},
			},
			message: []string{"Plan denied by 1 of 1 policy: require-env [Deny]: every resource needs an env tag"},
		},
		{
			name:     "messageExpression and variables",
			plan:     planOf(tfUntagged),
			policies: policiesOf(jsonPolicySpec{"require-env-expr", specRequireEnvExpr}),
			violations: []Violation{
				{Policy: "require-env-expr", Validation: 0, Message: "env tag missing on terraform_data.bare, terraform_data.web", Action: ActionDeny},
			},
		},
		{
			name:     "an Audit-only violation is recorded but passes",
			plan:     planOf(tfUntagged),
			policies: policiesOf(jsonPolicySpec{"audit-env", withActions(specRequireEnv, "[Audit]")}),
			passed:   true,
			violations: []Violation{
				{Policy: "audit-env", Validation: 1, Message: "every resource needs an env tag", Action: ActionAudit},
			},
			message: []string{"Plan passed 1 policy with 1 non-blocking violation: audit-env [Audit]", "audit-env [Audit]"},
		},
		{
			name:     "a Warn violation is recorded but passes",
			plan:     planOf(tfUntagged),
			policies: policiesOf(jsonPolicySpec{"warn-env", withActions(specRequireEnv, "[Warn, Audit]")}),
			passed:   true,
			violations: []Violation{
				{Policy: "warn-env", Validation: 1, Message: "every resource needs an env tag", Action: ActionWarn},
			},
		},
		{
			name: "Deny wins over Audit, listed first",
			plan: planOf(tfUntagged),
			policies: policiesOf(
				jsonPolicySpec{"a-audit", withActions(specRequireEnv, "[Audit]")},
				jsonPolicySpec{"z-deny", withActions(specRequireEnv, "[Deny, Audit]")},
			),
			violations: []Violation{
				{Policy: "z-deny", Validation: 1, Message: "every resource needs an env tag", Action: ActionDeny},
				{Policy: "a-audit", Validation: 1, Message: "every resource needs an env tag", Action: ActionAudit},
			},
			message: []string{"Plan denied by 1 of 2 policies: z-deny [Deny]"},
		},
		{
			name:     "a policy that does not compile errors and blocks",
			plan:     planOf(tfTagged),
			policies: policiesOf(jsonPolicySpec{"broken", specBadCEL}, jsonPolicySpec{"fine", specAlwaysPass}),
			errored:  true,
			message:  []string{`policy "broken": does not compile: spec.validations[0].expression: Invalid value`, "Syntax error"},
			absent:   []string{`policy "fine"`},
		},
		{
			name:     "a runtime error errors and blocks",
			plan:     planOf(tfTagged),
			policies: policiesOf(jsonPolicySpec{"runtime", specRuntimeError}),
			errored:  true,
			message:  []string{`policy "runtime": spec.validations[0]: no such key: no_such_field`},
		},
		{
			name:     "a matchCondition error blocks even with failurePolicy Ignore",
			plan:     planOf(tfTagged),
			policies: policiesOf(jsonPolicySpec{"bad-match", specMatchConditionError}),
			errored:  true,
			message:  []string{`policy "bad-match": spec.matchConditions:`, "no such key: no_such_field"},
		},
		{
			name:     "matchConditions exclude a plan",
			plan:     planOf(tfEnv("dev")),
			policies: policiesOf(jsonPolicySpec{"prod-only", specProdOnly}),
			passed:   true,
			message:  []string{"Plan passed 1 policy (1 not applicable by matchConditions)"},
		},
		{
			name:     "matchConditions select a plan",
			plan:     planOf(tfEnv("prod")),
			policies: policiesOf(jsonPolicySpec{"prod-only", specProdOnly}),
			violations: []Violation{
				{Policy: "prod-only", Validation: 0, Message: "prod changes need a change ticket", Action: ActionDeny},
			},
		},
		{
			name:     "errors never quote plan values",
			plan:     planOf(tfSecret),
			policies: policiesOf(jsonPolicySpec{"overload", specPasswordOverload}),
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
			policies: policiesOf(jsonPolicySpec{"fine", specAlwaysPass}),
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
			policies: policiesOf(jsonPolicySpec{"fine", specAlwaysPass}),
			errored:  true,
			message:  []string{"plan JSON is empty"},
		},
		{
			name: "a Kubernetes-mode policy errors",
			plan: planOf(tfTagged),
			policies: func(tb testing.TB) []Policy {
				p := jsonPolicy(tb, "k8s-mode", specAlwaysPass)
				p.Object.GetValidatingPolicySpec().EvaluationConfiguration.Mode = "Kubernetes"
				return []Policy{p}
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
	nvpol := decodePolicies(t, []byte(`
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
		jsonPolicySpec{"zeta", specAlwaysPass},
		jsonPolicySpec{"alpha", specAlwaysPass},
		jsonPolicySpec{"alpha", specAlwaysPass},
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
	v := e.Evaluate(ctx, policiesOf(jsonPolicySpec{"fine", specAlwaysPass})(t), plan(t, tfTagged))
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
	v := e.Evaluate(context.Background(), policiesOf(jsonPolicySpec{"evolving", specAlwaysPass})(t), p)
	require.True(t, v.Passed, v.Message)
	v = e.Evaluate(context.Background(), policiesOf(jsonPolicySpec{"evolving", specRequireEnv})(t), p)
	require.False(t, v.Passed, v.Message)
	v = e.Evaluate(context.Background(), policiesOf(jsonPolicySpec{"evolving", specBadCEL})(t), p)
	require.True(t, v.Errored, v.Message)
	v = e.Evaluate(context.Background(), policiesOf(jsonPolicySpec{"evolving", specAlwaysPass})(t), p)
	require.True(t, v.Passed, v.Message)
}

// jsonPolicySpec names a JSON-mode policy and its spec.
type jsonPolicySpec struct{ name, spec string }

// policiesOf builds the JSON-mode ValidatingPolicies specs describe.
func policiesOf(specs ...jsonPolicySpec) func(testing.TB) []Policy {
	return func(tb testing.TB) []Policy {
		out := []Policy{}
		for _, s := range specs {
			out = append(out, jsonPolicy(tb, s.name, s.spec))
		}
		return out
	}
}
