package policy_test

import (
	"context"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/policy/policytest"
)

// metricValue sums a counter (or a histogram's sample count) over the
// series of controller-runtime's registry that have every label of labels
// (name, value pairs); 0 when none has them yet.
func metricValue(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !hasLabels(m, labels) {
				continue
			}
			if h := m.GetHistogram(); h != nil {
				sum += float64(h.GetSampleCount())
			} else {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, pairs []string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if v, ok := have[pairs[i]]; !ok || v != pairs[i+1] {
			return false
		}
	}
	return true
}

// TestEvaluateRecordsMetrics: every evaluation counts its result, its
// duration and each violation's policy and action, in the process that
// asked for it.
func TestEvaluateRecordsMetrics(t *testing.T) {
	e := startedEngine(t)
	untagged := planOf(3, map[string]string{"owner": "team-a"})
	type snapshot struct{ passed, failed, errored, deny, audit, warn, durations float64 }
	take := func() snapshot {
		return snapshot{
			passed:    metricValue(t, "magos_policy_evaluations_total", "result", "passed"),
			failed:    metricValue(t, "magos_policy_evaluations_total", "result", "failed"),
			errored:   metricValue(t, "magos_policy_evaluations_total", "result", "error"),
			deny:      metricValue(t, "magos_policy_violations_total", "policy", "deny", "action", "Deny"),
			audit:     metricValue(t, "magos_policy_violations_total", "policy", "audit", "action", "Audit"),
			warn:      metricValue(t, "magos_policy_violations_total", "policy", "warn", "action", "Warn"),
			durations: metricValue(t, "magos_policy_evaluation_duration_seconds"),
		}
	}
	before := take()
	e.Evaluate(context.Background(), "ns", []policy.Policy{policytest.JSONPolicy(t, "ok", policytest.SpecAlwaysPass)}, untagged)
	e.Evaluate(context.Background(), "ns", []policy.Policy{policytest.JSONPolicy(t, "deny", policytest.SpecRequireEnv), policytest.JSONPolicy(t, "audit", policytest.WithActions(policytest.SpecRequireEnv, "[Audit]"))}, untagged)
	e.Evaluate(context.Background(), "ns", []policy.Policy{policytest.JSONPolicy(t, "warn", policytest.WithActions(policytest.SpecRequireEnv, "[Warn]"))}, untagged)
	e.Evaluate(context.Background(), "ns", []policy.Policy{policytest.JSONPolicy(t, "broken", policytest.SpecBadCEL)}, untagged)
	after := take()

	assert.Equal(t, snapshot{passed: 2, failed: 1, errored: 1, deny: 1, audit: 1, warn: 1, durations: 4}, snapshot{
		passed:    after.passed - before.passed,
		failed:    after.failed - before.failed,
		errored:   after.errored - before.errored,
		deny:      after.deny - before.deny,
		audit:     after.audit - before.audit,
		warn:      after.warn - before.warn,
		durations: after.durations - before.durations,
	})
}
