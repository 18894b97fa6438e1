package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Results of one request to the artifact proxy, the values of the result
// label of magos_artifact_proxy_requests_total.
const (
	// ArtifactServed: the run got its artifact, digest checked.
	ArtifactServed = "served"
	// ArtifactUnauthenticated: no token, or one the apiserver did not
	// accept for the proxy's audience.
	ArtifactUnauthenticated = "unauthenticated"
	// ArtifactForbidden: a valid token, but not of the run in progress the
	// controller recorded, or a run whose source the guards refuse, or
	// whose artifact is not an artifact file of its Workspace's source on
	// an artifact host.
	ArtifactForbidden = "forbidden"
	// ArtifactFailed: the apiserver or source-controller failed, a Job was
	// not recorded yet (answered 503, which the runner retries), or the
	// bytes did not have the run's digest.
	ArtifactFailed = "failed"
)

var artifactRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "magos_artifact_proxy_requests_total",
	Help: "Requests to the workspace-controller's artifact proxy, by result (served, unauthenticated, forbidden, failed).",
}, []string{"result"})

func init() {
	ctrlmetrics.Registry.MustRegister(artifactRequests)
	for _, r := range []string{ArtifactServed, ArtifactUnauthenticated, ArtifactForbidden, ArtifactFailed} {
		artifactRequests.WithLabelValues(r)
	}
}

// RecordArtifactRequest counts one artifact proxy request by its result.
func RecordArtifactRequest(result string) { artifactRequests.WithLabelValues(result).Inc() }
