package rollout

import (
	ctrl "sigs.k8s.io/controller-runtime"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/observe"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

// +kubebuilder:rbac:groups=magos.dev,resources=rollouts,verbs=get;list;watch
// +kubebuilder:rbac:groups=magos.dev,resources=rollouts/status,verbs=get;update;patch

// Register wires the rollout-controller's reconcilers into mgr.
func Register(mgr ctrl.Manager, _ setup.Options) error {
	r := &observe.Reconciler[*magosv1.Rollout]{
		Client:    mgr.GetClient(),
		Kind:      magosv1.RolloutKind,
		New:       func() *magosv1.Rollout { return &magosv1.Rollout{} },
		Suspended: (*magosv1.Rollout).IsSuspended,
	}
	return r.SetupWithManager(mgr)
}
