package workspace

import (
	ctrl "sigs.k8s.io/controller-runtime"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/observe"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

// +kubebuilder:rbac:groups=magos.dev,resources=workspaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=magos.dev,resources=workspaces/status,verbs=get;update;patch

// Register wires the workspace-controller's reconcilers into mgr.
func Register(mgr ctrl.Manager, _ setup.Options) error {
	r := &observe.Reconciler[*magosv1.Workspace]{
		Client:    mgr.GetClient(),
		Kind:      magosv1.WorkspaceKind,
		New:       func() *magosv1.Workspace { return &magosv1.Workspace{} },
		Suspended: (*magosv1.Workspace).IsSuspended,
	}
	return r.SetupWithManager(mgr)
}
