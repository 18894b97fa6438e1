package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	workspaceRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "magos_workspace_runs_total",
		Help: "Finished Workspace runs by phase (plan, apply, destroy) and result (Succeeded, Failed, Stale, Locked).",
	}, []string{"phase", "result"})

	workspaceRunDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "magos_workspace_run_duration_seconds",
		Help:    "Duration of Workspace runs from Job start to completion, by phase and result.",
		Buckets: []float64{1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600},
	}, []string{"phase", "result"})

	driftDetected = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "magos_workspace_drift_detected_total",
		Help: "Drift re-plans that found changes made outside Magos.",
	})

	retries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "magos_workspace_retries_total",
		Help: "Failed runs by what follows them: retried (a retry is scheduled), stalled (a reason no retry fixes) or exhausted (spec.retry.maxAttempts reached).",
	}, []string{"outcome"})
)

// RecordRetry counts a failed run by its outcome (decide.RetryScheduled,
// RetryStalled or RetryExhausted in controllers/internal/workspace/decide).
func RecordRetry(outcome string) { retries.WithLabelValues(outcome).Inc() }

func init() {
	ctrlmetrics.Registry.MustRegister(workspaceRuns, workspaceRunDuration, driftDetected, retries)
}

// RecordRun counts a finished run and its duration in seconds.
func RecordRun(phase, result string, seconds float64) {
	workspaceRuns.WithLabelValues(phase, result).Inc()
	if seconds > 0 {
		workspaceRunDuration.WithLabelValues(phase, result).Observe(seconds)
	}
}

// RecordDrift counts a drift re-plan that found changes.
func RecordDrift() { driftDetected.Inc() }
