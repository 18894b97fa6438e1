package ops

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// SetSuspend sets spec.suspend of the target, a Workspace or a Rollout
// (kind magosv1.WorkspaceKind or magosv1.RolloutKind), to suspend.
func SetSuspend(ctx context.Context, t *Target, kind string, suspend bool) error {
	var obj client.Object
	var set func()
	switch kind {
	case magosv1.WorkspaceKind:
		ws := &magosv1.Workspace{}
		obj, set = ws, func() { ws.Spec.Suspend = suspend }
	case magosv1.RolloutKind:
		ro := &magosv1.Rollout{}
		obj, set = ro, func() { ro.Spec.Suspend = suspend }
	default:
		return fmt.Errorf("spec.suspend of a %s: only Workspaces and Rollouts are suspended", kind)
	}
	return t.Update(ctx, obj, func() error { set(); return nil })
}
