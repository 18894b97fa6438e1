package command

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/view"
)

// Main runs kubectl-magos with args (without the program name) on the
// process's standard streams and returns its exit code.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	return Run(ctx, args, streams)
}

// Run runs kubectl-magos with args on streams and returns its exit code;
// errors are written to streams.ErrOut. Nothing a terminal would act on
// reaches either stream (view.PrintableWriter).
func Run(ctx context.Context, args []string, streams genericiooptions.IOStreams) int {
	streams.Out, streams.ErrOut = view.NewPrintableWriter(streams.Out), view.NewPrintableWriter(streams.ErrOut)
	cmd := NewCommand(streams)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintln(streams.ErrOut, "error:", err)
		if failure.ExitCode(err) == failure.ExitUsage {
			fmt.Fprintf(streams.ErrOut, "See '%s --help' for usage.\n", cmd.DisplayName())
		}
	}
	return failure.ExitCode(err)
}

// NewCommand is the root command with every subcommand.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	f := &factory{flags: genericclioptions.NewConfigFlags(true), streams: streams}
	root := &cobra.Command{
		Use:   "kubectl-magos",
		Short: "Operate Magos Workspaces, Projects and Rollouts",
		Long: `kubectl magos shows and operates Magos objects: what a Workspace plans,
approving and re-running plans, waiting for applies, promoting Rollouts and
testing policies offline.

Exit codes: 0 success, 1 a refusal or a failure, 2 wrong usage.`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl magos"},
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return failure.Usage("%v", err) })
	f.flags.AddFlags(root.PersistentFlags())
	root.AddCommand(
		newGetCommand(f),
		newApproveCommand(f),
		newWaiveCommand(f),
		newWaitCommand(f),
		newUnlockCommand(f),
		newPromoteCommand(f),
		newAbortCommand(f),
		newPlanCommand(f),
		newPolicyCommand(f),
		newTreeCommand(f),
		newLogsCommand(f),
		newCheckCommand(f),
		newImportCommand(f),
		newUICommand(f),
		newVersionCommand(f),
	)
	root.AddCommand(newRequestCommands(f)...)
	root.AddCommand(newSuspendCommands(f)...)
	return root
}

// args checks a command's positional arguments: between minArgs and
// maxArgs of them, a usage error otherwise.
func args(minArgs, maxArgs int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		switch {
		case len(a) < minArgs:
			return failure.Usage("%s needs %d argument(s), got %d: %s", cmd.CommandPath(), minArgs, len(a), cmd.Use)
		case len(a) > maxArgs:
			return failure.Usage("%s takes at most %d argument(s), got %d: %s", cmd.CommandPath(), maxArgs, len(a), cmd.Use)
		}
		return nil
	}
}
