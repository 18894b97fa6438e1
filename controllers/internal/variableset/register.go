package variableset

import (
	ctrl "sigs.k8s.io/controller-runtime"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/observe"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

// +kubebuilder:rbac:groups=magos.dev,resources=variablesets,verbs=get;list;watch
// +kubebuilder:rbac:groups=magos.dev,resources=variablesets/status,verbs=get;update;patch

// Register wires the variableset-controller's reconcilers into mgr.
func Register(mgr ctrl.Manager, _ setup.Options) error {
	r := &observe.Reconciler[*magosv1.VariableSet]{
		Client:    mgr.GetClient(),
		Kind:      magosv1.VariableSetKind,
		New:       func() *magosv1.VariableSet { return &magosv1.VariableSet{} },
		Suspended: nil,
	}
	return r.SetupWithManager(mgr)
}
