package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/magos-dev/magos/controllers/internal/rerror"
)

var (
	buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "magos_build_info",
		Help: "Always 1; labels say which controller, shard (empty: unsharded or the default shard) and version is running.",
	}, []string{"controller", "shard", "version"})

	reconcileResults = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "magos_reconcile_results_total",
		Help: "Reconciliations by kind and outcome (success, waiting, retry, stalled).",
	}, []string{"kind", "result"})
)

func init() {
	ctrlmetrics.Registry.MustRegister(buildInfo, reconcileResults)
}

// SetBuildInfo records which controller binary, shard and version is running.
func SetBuildInfo(controller, shard, version string) {
	buildInfo.WithLabelValues(controller, shard, version).Set(1)
}

// RecordReconcile counts one reconciliation of kind by the outcome of its
// error: success (nil), waiting (a rerror.Wait), stalled (a stalling
// rerror.Error) or retry.
func RecordReconcile(kind string, err error) {
	result := "retry"
	e, ok := rerror.As(err)
	switch {
	case err == nil:
		result = "success"
	case ok && e.Waiting:
		result = "waiting"
	case ok && e.Stalling:
		result = "stalled"
	}
	reconcileResults.WithLabelValues(kind, result).Inc()
}

var optionalKindServed = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "magos_optional_kind_served",
	Help: "1 when the apiserver serves a kind the controller watches if present (Flux's sources, Kyverno's policies) and the controller watches it; 0 while its CRD is missing.",
}, []string{"controller", "group", "kind"})

func init() { ctrlmetrics.Registry.MustRegister(optionalKindServed) }

// SetOptionalKindServed records whether controller watches the optional
// kind group/kind.
func SetOptionalKindServed(controller, group, kind string, served bool) {
	v := 0.0
	if served {
		v = 1
	}
	optionalKindServed.WithLabelValues(controller, group, kind).Set(v)
}
