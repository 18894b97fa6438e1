// Package policy is the policy gate the workspace-controller runs after
// every plan: it selects Kyverno ValidatingPolicies (policies.kyverno.io)
// by label and evaluates the plan JSON (`tofu show -json`) against them with
// Kyverno's own CEL engine, used as a library.
//
// # Selection
//
// [Select] lists cluster-scoped ValidatingPolicies, and NamespacedValidatingPolicies
// in the Workspace's namespace when that kind is served, that match ANY of
// the given label selectors: a policy applies when the Workspace's selector
// or the Project's selects it, so each layer can add policies and a
// Workspace cannot opt out of its Project's. A nil or empty selector selects
// nothing, never everything. Only policies with spec.evaluation.mode: JSON
// are returned; Kubernetes-mode policies are admission policies, not plan
// policies.
//
// # Evaluation
//
// An [Evaluator] compiles each policy once (cached by name and spec) and
// evaluates the plan JSON, bound to the CEL variable `object`, exactly as
// Kyverno does in JSON mode: matchConditions, variables, validations with
// message or messageExpression, the first failing validation reported.
// validationActions decide the effect of a failure: Deny blocks apply;
// Audit and Warn are recorded as violations but do not block.
//
// The gate fails closed: a policy that does not compile or errors while
// evaluating, a matchCondition that errors (spec.failurePolicy: Ignore is
// not honoured), a plan JSON that cannot be parsed, or a cancelled context
// all give a [Verdict] with Passed=false and Errored=true. Selecting no
// policy passes. PolicyExceptions are not applied.
//
// Every evaluation is counted in the magos_policy_* metrics.
package policy
