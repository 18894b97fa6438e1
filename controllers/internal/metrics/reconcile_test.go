package metrics_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

func TestRecordReconcileLabelsTheOutcome(t *testing.T) {
	count := func(result string) float64 {
		mfs, err := ctrlmetrics.Registry.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			if mf.GetName() != "magos_reconcile_results_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				if labels["kind"] == "LabelTest" && labels["result"] == result {
					return m.GetCounter().GetValue()
				}
			}
		}
		return 0
	}
	metrics.RecordReconcile("LabelTest", nil)
	metrics.RecordReconcile("LabelTest", errors.New("transient"))
	metrics.RecordReconcile("LabelTest", rerror.Retry("Busy", errors.New("busy")))
	metrics.RecordReconcile("LabelTest", rerror.Stall("InvalidSpec", errors.New("bad")))
	metrics.RecordReconcile("LabelTest", rerror.Wait("SourceNotReady", "no artifact", 0))
	assert.Equal(t, 1.0, count("success"))
	assert.Equal(t, 2.0, count("retry"))
	assert.Equal(t, 1.0, count("stalled"))
	assert.Equal(t, 1.0, count("waiting"))
}
