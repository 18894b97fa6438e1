// Package policytest holds the policies and helpers the tests of the
// policy gate share: the policy package's and the policy engine's.
package policytest

import (
	"strings"
	"testing"

	"github.com/magos-dev/magos/controllers/internal/policy"
)

// Policies the evaluation tests combine, as the lines of spec after
// `evaluation:`.
const (
	// SpecRequireEnv denies resources created without an env tag.
	SpecRequireEnv = `
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
	SpecRequireEnvExpr = `
variables:
- name: missing
  expression: >-
    object.resource_changes.filter(rc,
      !rc.change.after.?input.?tags[?'env'].hasValue()).map(rc, rc.address)
validations:
- expression: "size(variables.missing) == 0"
  messageExpression: "'env tag missing on ' + variables.missing.join(', ')"
`
	// SpecProdOnly fails every plan whose env variable is prod, and
	// does not apply to others.
	SpecProdOnly = `
matchConditions:
- name: prod-only
  expression: "object.?variables.?env.?value.orValue('') == 'prod'"
validations:
- expression: "false"
  message: prod changes need a change ticket
`
	SpecBadCEL = `
validations:
- expression: "object.resource_changes.all(rc, rc.type ==)"
  message: broken
`
	SpecRuntimeError = `
validations:
- expression: "object.no_such_field == 'x'"
  message: unreachable
`
	SpecMatchConditionError = `
failurePolicy: Ignore
matchConditions:
- name: broken
  expression: "object.no_such_field == 'x'"
validations:
- expression: "true"
`
	// SpecPasswordOverload errors on a plan value without quoting it.
	SpecPasswordOverload = `
validations:
- expression: "object.resource_changes.all(rc, rc.change.after.input.password > 5)"
`
	SpecAlwaysPass = `
validations:
- expression: "size(object.resource_changes) >= 0"
`
)

// WithActions replaces the Deny of spec's validationActions with actions.
func WithActions(spec string, actions string) string {
	return strings.Replace(spec, "validationActions: [Deny]", "validationActions: "+actions, 1)
}

// SpecQuadratic compares every resource change with every other one: cheap
// to write, slow on a big plan.
const SpecQuadratic = `
validations:
- expression: >-
    object.resource_changes.all(a,
      object.resource_changes.all(b, a.address != b.address || a.change == b.change))
  message: unique addresses
`

// DecodePolicies parses one or more YAML documents into policies.
func DecodePolicies(tb testing.TB, doc []byte) []policy.Policy {
	tb.Helper()
	out, err := policy.DecodeYAML(doc)
	if err != nil {
		tb.Fatalf("decoding policies: %v\n%s", err, doc)
	}
	return out
}

// JSONPolicy builds a cluster-scoped JSON-mode ValidatingPolicy named name
// from the YAML lines of its spec that follow `evaluation:` (indented by
// two spaces, like the rest of spec).
func JSONPolicy(tb testing.TB, name, spec string) policy.Policy {
	tb.Helper()
	doc := "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata:\n  name: " + name +
		"\nspec:\n  evaluation:\n    mode: JSON\n" + Indent(strings.TrimLeft(spec, "\n"), "  ")
	ps := DecodePolicies(tb, []byte(doc))
	if len(ps) != 1 {
		tb.Fatalf("expected one policy, got %d", len(ps))
	}
	return ps[0]
}

// Indent prefixes every non-empty line of s.
func Indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
