package command

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/view"
)

type requestOptions struct {
	wait    bool
	timeout time.Duration
}

// newRequestCommands are replan and retry: both set the reconcile request
// annotation; retry refuses a Workspace whose last run did not fail.
func newRequestCommands(f *factory) []*cobra.Command {
	replan := &requestOptions{}
	replanCmd := &cobra.Command{
		Use:   "replan WORKSPACE",
		Short: "Plan a Workspace again now, even when nothing changed",
		Long: `Ask for a new plan now by setting the reconcile request annotation
(` + magosv1.ReconcileRequestAnnotation + `) to the current time; the controller records the
request it handled in status.lastHandledReconcileAt.`,
		Example: `  kubectl magos replan hello
  kubectl magos replan hello --wait   # until the plan it started has finished`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error { return replan.run(cmd.Context(), f, a[0], nil) },
	}
	retry := &requestOptions{}
	retryCmd := &cobra.Command{
		Use:   "retry WORKSPACE",
		Short: "Retry a Workspace's failed run now, without waiting for its backoff",
		Long: `Retry the failed run of a Workspace now by setting the reconcile request
annotation (` + magosv1.ReconcileRequestAnnotation + `) to the current time. Refused when
its last run did not fail.`,
		Example: `  kubectl magos retry hello --wait`,
		Args:    args(1, 1),
		RunE:    func(cmd *cobra.Command, a []string) error { return retry.run(cmd.Context(), f, a[0], ops.Retryable) },
	}
	for _, c := range []struct {
		cmd *cobra.Command
		o   *requestOptions
	}{{replanCmd, replan}, {retryCmd, retry}} {
		c.cmd.Flags().BoolVar(&c.o.wait, "wait", false, "wait until the request is handled and the run it started has finished")
		c.cmd.Flags().DurationVar(&c.o.timeout, "timeout", 10*time.Minute, "how long --wait waits")
	}
	return []*cobra.Command{replanCmd, retryCmd}
}

// run sets the request after check (if any) accepts the Workspace.
func (o *requestOptions) run(ctx context.Context, f *factory, name string, check func(*magosv1.Workspace) error) error {
	t, err := f.target(name)
	if err != nil {
		return err
	}
	at, err := ops.RequestReconcile(ctx, t, check)
	if err != nil {
		return err
	}
	fmt.Fprintln(f.streams.Out, view.ReconcileRequested(name, at))
	if !o.wait {
		return nil
	}
	ws, err := t.WaitWorkspace(ctx, o.timeout, "handle the request of "+at, func(ws *magosv1.Workspace) (bool, error) { return ops.RequestDone(ws, at) })
	if err != nil {
		return err
	}
	fmt.Fprintf(f.streams.Out, "Workspace %s: request handled; %s: %s\n", name, ws.Status.Phase, view.ReadyMessage(ws.Status.Conditions))
	return nil
}
