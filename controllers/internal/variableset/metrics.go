package variableset

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// States of a reference, the values of the state label of
// magos_variableset_references.
const (
	referenceReady           = "ready"
	referenceMissing         = "missing"
	referenceOptionalMissing = "optional_missing"
)

// Where key names came from, the values of the source label of
// magos_variableset_reference_reads_total.
const (
	readMemo      = "memo"
	readAPIServer = "apiserver"
)

var (
	referencesByState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "magos_variableset_references",
		Help: "References (objects and keys) of all VariableSets, by state (ready, missing, optional_missing).",
	}, []string{"state"})

	referenceReads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "magos_variableset_reference_reads_total",
		Help: "Key-name lookups of referenced Secrets and ConfigMaps, by source (memo, apiserver).",
	}, []string{"source"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(referencesByState, referenceReads)
	for _, s := range []string{referenceReady, referenceMissing, referenceOptionalMissing} {
		referencesByState.WithLabelValues(s)
	}
	for _, s := range []string{readMemo, readAPIServer} {
		referenceReads.WithLabelValues(s)
	}
}

func recordRead(source string) { referenceReads.WithLabelValues(source).Inc() }

// referenceCounts is how many references of one VariableSet are in each state.
type referenceCounts map[string]int

// countReferences classifies the references of r by state.
func countReferences(r *rendered) referenceCounts {
	return referenceCounts{
		referenceReady:           len(r.References) - len(r.Missing) - r.OptionalMissing,
		referenceMissing:         len(r.Missing),
		referenceOptionalMissing: r.OptionalMissing,
	}
}

// referenceTracker remembers each VariableSet's counts so the gauge stays
// exact without listing VariableSets.
var referenceTracker = struct {
	sync.Mutex
	counts map[string]referenceCounts
}{counts: map[string]referenceCounts{}}

// trackReferences records the reference states of the VariableSet key; nil
// forgets a deleted VariableSet.
func trackReferences(key string, c referenceCounts) {
	referenceTracker.Lock()
	defer referenceTracker.Unlock()
	for state, n := range referenceTracker.counts[key] {
		referencesByState.WithLabelValues(state).Sub(float64(n))
	}
	delete(referenceTracker.counts, key)
	if c == nil {
		return
	}
	for state, n := range c {
		referencesByState.WithLabelValues(state).Add(float64(n))
	}
	referenceTracker.counts[key] = c
}
