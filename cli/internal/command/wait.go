package command

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/ops"
)

type waitOptions struct {
	applied string
	timeout time.Duration
}

func newWaitCommand(f *factory) *cobra.Command {
	o := &waitOptions{}
	cmd := &cobra.Command{
		Use:   "wait WORKSPACE --applied[=REVISION]",
		Short: "Wait until a Workspace applied a revision",
		Long: `Wait until a Workspace applied a revision (status.lastApplied), not merely
until it is Ready: without a value, the source revision it last saw
(status.source.revision). Exits 1 on timeout or when the Workspace stalls,
with its Ready message.`,
		Example: `  kubectl magos wait hello --applied                          # the current source revision
  kubectl magos wait hello --applied=main@sha1:9616bca… --timeout=15m`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if o.applied == "" {
				return failure.Usage("wait needs --applied (or --applied=REVISION)")
			}
			return o.run(cmd.Context(), f, a[0])
		},
	}
	cmd.Flags().StringVar(&o.applied, "applied", "", "the revision to wait for; without a value the source revision in status")
	cmd.Flags().Lookup("applied").NoOptDefVal = ops.SourceRevision
	cmd.Flags().DurationVar(&o.timeout, "timeout", 10*time.Minute, "how long to wait")
	return cmd
}

func (o *waitOptions) run(ctx context.Context, f *factory, name string) error {
	t, err := f.target(name)
	if err != nil {
		return err
	}
	what := "apply revision " + o.applied
	if o.applied == ops.SourceRevision {
		what = "apply its source revision"
	}
	ws, err := t.WaitWorkspace(ctx, o.timeout, what, func(ws *magosv1.Workspace) (bool, error) { return ops.RevisionApplied(ws, o.applied) })
	if err != nil {
		return err
	}
	fmt.Fprintf(f.streams.Out, "Workspace %s: revision %s applied (plan %s)\n", name, ws.Status.LastApplied.Revision, ws.Status.LastApplied.PlanID)
	return nil
}
