package command

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/view"
)

func newUnlockCommand(f *factory) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "unlock WORKSPACE",
		Short: "Release a stuck state lock (status.lock)",
		Long: `Show the holder of a Workspace's stuck state lock and, once confirmed,
ask the controller to release it (annotation ` + magosv1.UnlockAnnotation + `=<holder>). The
controller releases it only while no run uses the state. Refused when the
Workspace shows no lock.`,
		Example: `  kubectl magos unlock hello
  kubectl magos unlock hello --yes   # without asking`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error { return unlock(cmd.Context(), f, a[0], yes) },
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func unlock(ctx context.Context, f *factory, name string, yes bool) error {
	t, err := f.target(name)
	if err != nil {
		return err
	}
	lock, err := ops.StuckLock(ctx, t)
	if err != nil {
		return err
	}
	fmt.Fprintln(f.streams.Out, view.LockHeld(name, lock))
	if !yes && !confirm(f, "Release it? Only do so when no run uses the state [y/N]: ") {
		return failure.Refused("not confirmed: nothing changed")
	}
	if err := ops.Unlock(ctx, t, lock.Holder); err != nil {
		return err
	}
	fmt.Fprintln(f.streams.Out, view.UnlockRequested(name, lock.Holder))
	return nil
}

// confirm asks question on the output and reads yes or no from the input.
func confirm(f *factory, question string) bool {
	fmt.Fprint(f.streams.Out, question)
	answer, _ := bufio.NewReader(f.streams.In).ReadString('\n')
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "y" || answer == "yes"
}
