package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	rolloutStageTransitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "magos_rollout_stage_transitions_total",
		Help: "Rollout stage transitions by the phase entered (Pending, Progressing, Baking, WaitingForPromotion, Succeeded, Halted).",
	}, []string{"phase"})

	rolloutDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "magos_rollout_duration_seconds",
		Help:    "Time from admitting a revision to the first stage until the last stage succeeded.",
		Buckets: []float64{10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400},
	})
)

func init() {
	ctrlmetrics.Registry.MustRegister(rolloutStageTransitions, rolloutDuration)
}

// RecordStageTransition counts a stage entering phase.
func RecordStageTransition(phase string) { rolloutStageTransitions.WithLabelValues(phase).Inc() }

// RecordRolloutDuration records a revision rolled out to every stage.
func RecordRolloutDuration(seconds float64) { rolloutDuration.Observe(seconds) }
