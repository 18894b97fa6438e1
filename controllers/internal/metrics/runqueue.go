package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/magos-dev/magos/controllers/internal/runqueue"
)

var (
	runQueueDepthDesc = prometheus.NewDesc("magos_workspace_run_queue_depth",
		"Runs waiting for a slot under the bound on runs in progress, by priority (urgent, normal, drift).", []string{"priority"}, nil)
	runsInProgressDesc = prometheus.NewDesc("magos_workspace_runs_in_progress",
		"Runs holding a slot of the run queue (started, or found running after a restart).", nil, nil)

	runQueueWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "magos_workspace_run_queue_wait_seconds",
		Help:    "How long admitted runs waited for a slot, by priority.",
		Buckets: []float64{0.1, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600},
	}, []string{"priority"})
)

// runQueues is the queues whose depth is exported: one per workspace
// reconciler in the process (tests run several).
var runQueues = &queueCollector{}

func init() {
	ctrlmetrics.Registry.MustRegister(runQueues, runQueueWait)
}

// RegisterRunQueue exports the depth that depth reports.
func RegisterRunQueue(depth func() (map[runqueue.Priority]int, int)) {
	runQueues.mu.Lock()
	defer runQueues.mu.Unlock()
	runQueues.depths = append(runQueues.depths, depth)
}

// ObserveRunQueueWait records how long an admitted run of priority p waited.
func ObserveRunQueueWait(p runqueue.Priority, waited time.Duration) {
	runQueueWait.WithLabelValues(p.String()).Observe(waited.Seconds())
}

// queueCollector sums the registered queues' depths at scrape time; a
// process without a queue exports none.
type queueCollector struct {
	mu     sync.Mutex
	depths []func() (map[runqueue.Priority]int, int)
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- runQueueDepthDesc
	ch <- runsInProgressDesc
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.depths) == 0 {
		return // not a workspace-controller
	}
	waiting, running := map[runqueue.Priority]int{}, 0
	for _, depth := range c.depths {
		w, r := depth()
		for p, n := range w {
			waiting[p] += n
		}
		running += r
	}
	for _, p := range runqueue.Priorities {
		ch <- prometheus.MustNewConstMetric(runQueueDepthDesc, prometheus.GaugeValue, float64(waiting[p]), p.String())
	}
	ch <- prometheus.MustNewConstMetric(runsInProgressDesc, prometheus.GaugeValue, float64(running))
}
