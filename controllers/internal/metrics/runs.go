package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Steps of a run (the step label of magos_workspace_run_step_duration_seconds).
const (
	// StepFetch: fetching, verifying and extracting the source artifact.
	StepFetch = "fetch"
	// StepInit: the engine's init.
	StepInit = "init"
	// StepEngine: the engine's plan, apply or destroy itself.
	StepEngine = "engine"
	// StepRender: the engine's rendering of the plan as JSON (plan and apply).
	StepRender = "render"
	// StepStorage: storing the plan (plan) or loading it (apply).
	StepStorage = "storage"
)

var (
	runFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "magos_workspace_run_failures_total",
		Help: "Failed Workspace runs by phase and reason (the runner's reasons, DeadlineExceeded, OOMKilled, ImagePullFailed, Evicted, PolicyDenied, StateLocked, else RunFailed).",
	}, []string{"phase", "reason"})

	runStepDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "magos_workspace_run_step_duration_seconds",
		Help:    "Duration of the steps of Workspace runs as the runner reports them, by phase and step (fetch, init, engine, render, storage).",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1800},
	}, []string{"phase", "step"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(runFailures, runStepDuration)
}

// RecordRunFailure counts a failed run of phase with reason, which the
// caller takes from the closed set magos_workspace_run_failures_total
// documents.
func RecordRunFailure(phase, reason string) { runFailures.WithLabelValues(phase, reason).Inc() }

// RecordRunStep records how long step of a run of phase took; a step the
// run did not reach (0 seconds) is not recorded.
func RecordRunStep(phase, step string, seconds float64) {
	if seconds > 0 {
		runStepDuration.WithLabelValues(phase, step).Observe(seconds)
	}
}
