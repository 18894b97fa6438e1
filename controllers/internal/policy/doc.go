// Package policy is the policy gate the workspace-controller runs after
// every plan: it selects Kyverno ValidatingPolicies (policies.kyverno.io)
// by label and has the plan JSON (`tofu show -json`) evaluated against them
// by the policy engine, a process of its own (controllers/policy-engine,
// package policyengine) that holds Kyverno's CEL engine. This package
// links only Kyverno's API types, so a controller whose Workspaces no
// policy selects never loads the engine.
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
// An [EngineClient] starts the policy engine with the first evaluation that
// has a policy, sends it each plan with the selected policies and a
// deadline (package apis/policyprotocol), and returns its Verdict. The engine
// keeps compiled policies between evaluations. The gate fails closed: an
// engine that cannot start, dies or overruns its deadline gives a verdict
// with Passed=false and Errored=true, and the next evaluation starts a new
// engine. Selecting no policy passes.
//
// Every evaluation is counted in the magos_policy_* metrics.
package policy
