package command

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/magos-dev/magos/cli/internal/ops"
)

type logsOptions struct {
	run    int
	follow bool
}

func newLogsCommand(f *factory) *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:   "logs WORKSPACE",
		Short: "Print the runner output of a Workspace's current or a recent run",
		Long: `Print the runner output of the run in progress (else the newest one), or
with --run N of status.history[N] (0 is the newest), from the run's Pod.
Runs' Jobs and Pods are deleted once the workspace-controller's Job TTL has
passed after they finished; the result of the run stays in status.history.`,
		Example: `  kubectl magos logs hello -f        # follow the current run
  kubectl magos logs hello --run 1   # the run before the newest`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return o.show(cmd.Context(), f, a[0], cmd.Flags().Changed("run"))
		},
	}
	cmd.Flags().IntVar(&o.run, "run", 0, "the run in status.history to show, 0 the newest")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "follow the output while the run goes on")
	return cmd
}

func (o *logsOptions) show(ctx context.Context, f *factory, name string, fromHistory bool) error {
	t, err := f.target(name)
	if err != nil {
		return err
	}
	cs, err := f.clientset()
	if err != nil {
		return err
	}
	stream, err := ops.RunLogs(ctx, t, cs, o.run, fromHistory, o.follow)
	if err != nil {
		return err
	}
	defer stream.Close()
	_, err = io.Copy(f.streams.Out, stream)
	return err
}
