package command

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/view"
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
	var kind string
	switch lookupKind(kindName) {
	case workspaces:
		kind = magosv1.WorkspaceKind
	case rollouts:
		kind = magosv1.RolloutKind
	default:
		return failure.Usage("%s works on a workspace or a rollout, not %q", verb, kindName)
	}
	t, err := f.target(name)
	if err != nil {
		return err
	}
	if err := ops.SetSuspend(ctx, t, kind, suspend); err != nil {
		return err
	}
	fmt.Fprintln(f.streams.Out, view.Suspended(kind, name, suspend))
	return nil
}
