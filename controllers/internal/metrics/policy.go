package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Results of one policy-gate evaluation, the values of the result label of
// magos_policy_evaluations_total.
const (
	// PolicyResultPassed: no Deny violation and no error; apply may go on.
	PolicyResultPassed = "passed"
	// PolicyResultFailed: at least one Deny violation; apply is blocked.
	PolicyResultFailed = "failed"
	// PolicyResultError: a policy or the plan could not be evaluated; apply
	// is blocked (fail closed).
	PolicyResultError = "error"
)

var (
	policyEvaluations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "magos_policy_evaluations_total",
		Help: "Policy-gate evaluations of a plan, by result (passed, failed, error).",
	}, []string{"result"})

	policyViolations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "magos_policy_violations_total",
		Help: "Policy violations found in plans, by policy (the ValidatingPolicy's name, or namespace/name of a NamespacedValidatingPolicy) and validation action (Deny, Audit, Warn).",
	}, []string{"policy", "action"})

	policyEvaluationDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "magos_policy_evaluation_duration_seconds",
		Help:    "Time to evaluate one plan against all its selected policies.",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	})
)

// Restrictions of the policy engine's sandbox, the values of the
// restriction label of magos_policy_sandbox_enforced.
const (
	// SandboxFiles: the engine can open no file.
	SandboxFiles = "files"
	// SandboxNetwork: the engine can bind or connect no TCP socket.
	SandboxNetwork = "network"
)

// policySandboxEnforced has no series until the workspace-controller has
// asked its policy engine at start: the other controllers run no engine.
var policySandboxEnforced = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "magos_policy_sandbox_enforced",
	Help: "1 when the policy engine's sandbox takes that right from it (restriction: files, network), 0 when this kernel or build cannot; set at the workspace-controller's start.",
}, []string{"restriction"})

// SetPolicySandbox records what the policy engine's sandbox takes from it.
func SetPolicySandbox(files, network bool) {
	policySandboxEnforced.WithLabelValues(SandboxFiles).Set(boolValue(files))
	policySandboxEnforced.WithLabelValues(SandboxNetwork).Set(boolValue(network))
}

// boolValue is 1 for true, 0 for false.
func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func init() {
	ctrlmetrics.Registry.MustRegister(policyEvaluations, policyViolations, policyEvaluationDuration, policySandboxEnforced)
	// Start every known series at zero so dashboards and rate() see them
	// before the first evaluation.
	for _, r := range []string{PolicyResultPassed, PolicyResultFailed, PolicyResultError} {
		policyEvaluations.WithLabelValues(r)
	}
}

// RecordPolicyEvaluation counts one evaluation of a plan with its result
// and how long it took in seconds.
func RecordPolicyEvaluation(result string, seconds float64) {
	policyEvaluations.WithLabelValues(result).Inc()
	policyEvaluationDuration.Observe(seconds)
}

// RecordPolicyViolation counts one violation of policy (its name, or
// namespace/name of a namespaced policy) with its validation action.
func RecordPolicyViolation(policy, action string) {
	policyViolations.WithLabelValues(policy, action).Inc()
}
