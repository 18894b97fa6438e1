package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

var (
	resourceInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "magos_resource_info",
		Help: "Always 1, one series per Magos object, exported by the controller that owns its kind; labels say its Ready status, whether it is stalled or suspended, its phase and its revision.",
	}, []string{"kind", "namespace", "name", "ready", "stalled", "suspended", "phase", "revision"})

	resources = newObjectSeries(resourceInfo)
)

func init() {
	ctrlmetrics.Registry.MustRegister(resourceInfo)
}

// Resource is an object magos_resource_info describes.
type Resource interface {
	GetNamespace() string
	GetName() string
	GetConditions() []metav1.Condition
}

// ResourceInfo is what magos_resource_info says of an object besides its
// conditions: phase is "" for a kind without one, revision is the applied
// revision of a Workspace, the admitted revision of a Rollout, else "".
type ResourceInfo struct {
	Suspended bool
	Phase     string
	Revision  string
}

// TrackResource sets the magos_resource_info series of obj, of kind, from
// its Ready and Stalled conditions and info, replacing the series it had.
func TrackResource(kind string, obj Resource, info ResourceInfo) {
	conds := obj.GetConditions()
	ready := string(metav1.ConditionUnknown)
	if c := meta.FindStatusCondition(conds, magosv1.ReadyCondition); c != nil {
		ready = string(c.Status)
	}
	stalled := meta.IsStatusConditionTrue(conds, magosv1.StalledCondition)
	resources.set(resourceKey(kind, obj.GetNamespace(), obj.GetName()), 1,
		kind, obj.GetNamespace(), obj.GetName(), ready, strconv.FormatBool(stalled), strconv.FormatBool(info.Suspended), info.Phase, info.Revision)
}

// ForgetResource deletes the magos_resource_info series of the object of
// kind: it was deleted or left the controller's cache.
func ForgetResource(kind, namespace, name string) {
	resources.forget(resourceKey(kind, namespace, name))
}

func resourceKey(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }
