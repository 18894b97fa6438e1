package metrics

import (
	"sync"

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

	workspacesByPhase = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "magos_workspaces",
		Help: "Workspaces by phase.",
	}, []string{"phase"})

	driftDetected = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "magos_workspace_drift_detected_total",
		Help: "Drift re-plans that found changes made outside Magos.",
	})

	stateLocksHeld = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "magos_workspace_state_locks_held",
		Help: "Workspaces whose state lock is held by a run that is gone.",
	})

	retries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "magos_workspace_retries_total",
		Help: "Failed runs by what follows them: retried (a retry is scheduled), stalled (a reason no retry fixes) or exhausted (spec.retry.maxAttempts reached).",
	}, []string{"outcome"})
)

// Outcomes of a failed run (magos_workspace_retries_total).
const (
	RetryScheduled = "retried"
	RetryStalled   = "stalled"
	RetryExhausted = "exhausted"
)

// RecordRetry counts a failed run by its outcome.
func RecordRetry(outcome string) { retries.WithLabelValues(outcome).Inc() }

func init() {
	ctrlmetrics.Registry.MustRegister(workspaceRuns, workspaceRunDuration, workspacesByPhase, driftDetected, stateLocksHeld, retries)
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

// phaseTracker remembers each Workspace's phase and lock so the gauges are
// exact without listing Workspaces.
var phaseTracker = struct {
	sync.Mutex
	phases map[string]string
	locked map[string]bool
}{phases: map[string]string{}, locked: map[string]bool{}}

// TrackWorkspace records the phase and lock state of the Workspace key;
// a deleted Workspace is tracked with phase "".
func TrackWorkspace(key, phase string, locked bool) {
	phaseTracker.Lock()
	defer phaseTracker.Unlock()
	if old, ok := phaseTracker.phases[key]; ok {
		workspacesByPhase.WithLabelValues(old).Dec()
		delete(phaseTracker.phases, key)
	}
	if phase != "" {
		phaseTracker.phases[key] = phase
		workspacesByPhase.WithLabelValues(phase).Inc()
	}
	if locked != phaseTracker.locked[key] {
		if locked {
			stateLocksHeld.Inc()
			phaseTracker.locked[key] = true
		} else {
			stateLocksHeld.Dec()
			delete(phaseTracker.locked, key)
		}
	}
}
