// Package metricstest reads the metrics a test process registered.
package metricstest

import (
	"testing"

	"github.com/stretchr/testify/require"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Sum gathers controller-runtime's registry and returns, of the series of
// the family name whose labels include match, how many there are and the
// sum of their values: a counter's or gauge's value, a histogram's sample
// count.
func Sum(t testing.TB, name string, match map[string]string) (n int, sum float64) {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range match {
				if labels[k] != v {
					continue series
				}
			}
			n++
			sum += m.GetGauge().GetValue() + m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return n, sum
}
