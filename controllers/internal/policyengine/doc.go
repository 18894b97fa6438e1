// Package policyengine evaluates plan JSON (`tofu show -json`) against
// Kyverno ValidatingPolicies with Kyverno's own CEL engine, used as a
// library. It is the heavy half of the policy gate: only the policy-engine
// binary, which the workspace-controller starts as a process
// (policy.EngineClient), and kubectl-magos's `policy test` link it. The
// workspace-controller itself links only package policy.
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
// all give a verdict with Passed=false and Errored=true. Selecting no
// policy passes.
//
// # Waivers
//
// A policy may carry PolicyExceptions (policy.Policy.Exceptions: the gate
// attaches those bound to the plan). The policy is evaluated without them
// first; a denial is then evaluated again with them, as Kyverno applies
// exceptions (matchConditions over the plan, exceptions.allowedValues),
// and where it no longer holds it is kept in the verdict, waived by the
// exceptions that matched, and does not block.
//
// [Serve] answers the policy engine protocol
// (package apis/policyprotocol) with one Evaluator.
package policyengine
