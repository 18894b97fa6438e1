package metrics

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// objectSeries keeps at most one series per object in a GaugeVec, keyed by
// the object: setting an object's series with other label values deletes
// the old series first, so a label change never leaves a stale one behind,
// and forgetting the object deletes its series.
//
// Cardinality: a Workspace has 2 per-object series in the steady state
// (magos_resource_info and, once it has applied,
// magos_workspace_last_applied_timestamp_seconds) and at most 5 (plus
// drifted, awaiting_since and state_lock_held while those hold), one of
// each at a time, so 10,000 Workspaces export 20,000 to 50,000 series: well
// within what one Prometheus handles. The
// controllers export them rather than a kube-state-metrics custom-resource
// configuration, which would need another component to run and its own
// RBAC to list every Magos custom resource in the cluster.
type objectSeries struct {
	mu     sync.Mutex
	vec    *prometheus.GaugeVec
	labels map[string][]string
}

func newObjectSeries(vec *prometheus.GaugeVec) *objectSeries {
	return &objectSeries{vec: vec, labels: map[string][]string{}}
}

// set makes the series with label values labels, at value v, the only
// series of key.
func (s *objectSeries) set(key string, v float64, labels ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.labels[key]; ok && !slices.Equal(old, labels) {
		s.vec.DeleteLabelValues(old...)
	}
	s.labels[key] = labels
	s.vec.WithLabelValues(labels...).Set(v)
}

// forget deletes the series of key, if it has one.
func (s *objectSeries) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.labels[key]; ok {
		s.vec.DeleteLabelValues(old...)
		delete(s.labels, key)
	}
}
