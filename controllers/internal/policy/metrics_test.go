package policy

import (
	"context"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// metricValue reads a counter (or a histogram's sample count) from
// controller-runtime's registry; label is name=value or "".
func metricValue(t *testing.T, name, labelName, labelValue string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelName != "" && !hasLabel(m, labelName, labelValue) {
				continue
			}
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("metric %s{%s=%q} not registered", name, labelName, labelValue)
	return 0
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// TestEvaluateRecordsMetrics: every evaluation counts its result, its
// duration and each violation's action.
func TestEvaluateRecordsMetrics(t *testing.T) {
	e, err := NewEvaluator()
	require.NoError(t, err)
	untagged := plan(t, tfUntagged)
	type snapshot struct{ passed, failed, errored, deny, audit, warn, durations float64 }
	take := func() snapshot {
		return snapshot{
			passed:    metricValue(t, "magos_policy_evaluations_total", "result", "passed"),
			failed:    metricValue(t, "magos_policy_evaluations_total", "result", "failed"),
			errored:   metricValue(t, "magos_policy_evaluations_total", "result", "error"),
			deny:      metricValue(t, "magos_policy_violations_total", "action", "Deny"),
			audit:     metricValue(t, "magos_policy_violations_total", "action", "Audit"),
			warn:      metricValue(t, "magos_policy_violations_total", "action", "Warn"),
			durations: metricValue(t, "magos_policy_evaluation_duration_seconds", "", ""),
		}
	}
	before := take()
	e.Evaluate(context.Background(), policiesOf(jsonPolicySpec{"ok", specAlwaysPass})(t), untagged)
	e.Evaluate(context.Background(), policiesOf(
		jsonPolicySpec{"deny", specRequireEnv},
		jsonPolicySpec{"audit", withActions(specRequireEnv, "[Audit]")},
	)(t), untagged)
	e.Evaluate(context.Background(), policiesOf(jsonPolicySpec{"warn", withActions(specRequireEnv, "[Warn]")})(t), untagged)
	e.Evaluate(context.Background(), policiesOf(jsonPolicySpec{"broken", specBadCEL})(t), untagged)
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
