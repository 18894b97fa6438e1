package command

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// newSuspendCommands are suspend and resume, which set spec.suspend of a
// Workspace or a Rollout.
func newSuspendCommands(f *factory) []*cobra.Command {
	return []*cobra.Command{
		suspendCommand(f, "suspend", true, `Stop new runs of a Workspace (a running one finishes), or stop a Rollout
admitting further stages (spec.suspend: true).`),
		suspendCommand(f, "resume", false, `Let a suspended Workspace run or a suspended Rollout admit stages again
(spec.suspend: false).`),
	}
}

func suspendCommand(f *factory, verb string, suspend bool, long string) *cobra.Command {
	return &cobra.Command{
		Use:       verb + " workspace|rollout NAME",
		Short:     fmt.Sprintf("%s a Workspace or a Rollout", verb),
		Long:      long,
		Example:   fmt.Sprintf("  kubectl magos %s workspace hello\n  kubectl magos %s rollout release", verb, verb),
		Args:      args(2, 2),
		ValidArgs: []string{"workspace", "rollout"},
		RunE: func(cmd *cobra.Command, a []string) error {
			return setSuspend(cmd.Context(), f, a[0], a[1], suspend)
		},
	}
}

// setSuspend sets spec.suspend of the Workspace or Rollout name (kind as
// typed) to suspend.
func setSuspend(ctx context.Context, f *factory, kindName, name string, suspend bool) error {
	verb := "resume"
	if suspend {
		verb = "suspend"
	}
	var obj client.Object
	var kind string
	set := func() {}
	switch lookupKind(kindName) {
	case workspaces:
		ws := &magosv1.Workspace{}
		obj, kind, set = ws, magosv1.WorkspaceKind, func() { ws.Spec.Suspend = suspend }
	case rollouts:
		ro := &magosv1.Rollout{}
		obj, kind, set = ro, magosv1.RolloutKind, func() { ro.Spec.Suspend = suspend }
	default:
		return usageError("%s works on a workspace or a rollout, not %q", verb, kindName)
	}
	t, err := targetOf(f, name)
	if err != nil {
		return err
	}
	if err := t.update(ctx, obj, func() error { set(); return nil }); err != nil {
		return err
	}
	fmt.Fprintf(f.streams.Out, "%s %s: spec.suspend=%t\n", kind, name, suspend)
	return nil
}
