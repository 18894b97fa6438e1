package realnode

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestControllersCollectWithinTheirMemoryLimit: each controller, run by
// the kubelet in a container with the chart's memory limit, gives the Go
// runtime 90% of that limit as its soft memory limit (read from its own
// cgroup), so the garbage of its caches is collected before the container
// reaches the limit. Read from the controller's own metrics.
func TestControllersCollectWithinTheirMemoryLimit(t *testing.T) {
	requireMagos(t)
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(node.Config)
	require.NoError(t, err)
	pods, err := cs.CoreV1().Pods(magosNamespace).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, name := range controllerNames {
		deploy := "magos-" + name + "-controller"
		pod := runningPodOf(pods.Items, deploy)
		require.NotNil(t, pod, "a running Pod of %s", deploy)
		limit := pod.Spec.Containers[0].Resources.Limits.Memory()
		require.False(t, limit.IsZero(), "the chart sets %s a memory limit", deploy)

		raw, err := cs.CoreV1().RESTClient().Get().
			AbsPath("/api/v1/namespaces", magosNamespace, "pods", pod.Name+":8080", "proxy", "metrics").DoRaw(ctx)
		require.NoError(t, err, "reading %s's metrics", deploy)
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
		require.NoError(t, err)
		family := families["go_gc_gomemlimit_bytes"]
		require.NotNil(t, family, "%s reports go_gc_gomemlimit_bytes", deploy)
		got := family.GetMetric()[0].GetGauge().GetValue()
		want := math.Floor(float64(limit.Value()) * 0.9)
		assert.Equal(t, want, got, "%s: the Go memory limit is 90%% of the container's %s", deploy, limit)
		t.Logf("realnode: %s Go memory limit %.0f MiB of the container's %s", deploy, got/(1<<20), limit)
	}
}

// runningPodOf is a running Pod of Deployment deploy, nil if none.
func runningPodOf(pods []corev1.Pod, deploy string) *corev1.Pod {
	for i := range pods {
		p := &pods[i]
		if strings.HasPrefix(p.Name, deploy+"-") && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			return p
		}
	}
	return nil
}
