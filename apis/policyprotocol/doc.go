// Package policyprotocol is the policy engine protocol: how a client (the
// workspace-controller's policy gate, `kubectl magos policy test`) asks
// the policy engine process (controllers/policy-engine) to evaluate a plan
// against ValidatingPolicies, and the Verdict the engine answers with.
//
// The client writes requests on the engine's stdin and reads one response
// per request from its stdout, in order; the engine exits when its stdin
// closes. A request is one line of JSON, a [Request], followed by exactly
// PlanBytes bytes of plan JSON (`tofu show -json`), sent as they are so
// that plan JSON the engine cannot parse still reaches it and gets an
// errored verdict. A response is one line of JSON, a [Response]. Neither
// carries anything else: the engine writes nothing else on stdout.
//
// The package needs only the standard library and apimachinery, so a
// client links none of Kyverno.
package policyprotocol
