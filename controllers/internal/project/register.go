package project

import (
	ctrl "sigs.k8s.io/controller-runtime"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/observe"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

// +kubebuilder:rbac:groups=magos.dev,resources=projects,verbs=get;list;watch
// +kubebuilder:rbac:groups=magos.dev,resources=projects/status,verbs=get;update;patch

// Register wires the project-controller's reconcilers into mgr.
func Register(mgr ctrl.Manager, _ setup.Options) error {
	r := &observe.Reconciler[*magosv1.Project]{
		Client:    mgr.GetClient(),
		Kind:      magosv1.ProjectKind,
		New:       func() *magosv1.Project { return &magosv1.Project{} },
		Suspended: nil,
	}
	return r.SetupWithManager(mgr)
}
