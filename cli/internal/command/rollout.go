package command

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/view"
)

func newPromoteCommand(f *factory) *cobra.Command {
	var revision string
	cmd := &cobra.Command{
		Use:   "promote ROLLOUT STAGE",
		Short: "Promote a Manual stage of a Rollout for a revision (spec.promotions)",
		Long: `Admit a Manual stage of a Rollout for a revision by adding {stage, revision}
to spec.promotions: by default the revision being rolled out (status.revision).`,
		Example: `  kubectl magos promote release prod
  kubectl magos promote release prod --revision main@sha1:9616bca…`,
		Args: args(2, 2),
		RunE: func(cmd *cobra.Command, a []string) error { return promote(cmd.Context(), f, a[0], a[1], revision) },
	}
	cmd.Flags().StringVar(&revision, "revision", "", "the revision to admit (default: status.revision)")
	return cmd
}

func promote(ctx context.Context, f *factory, name, stage, revision string) error {
	t, err := f.target(name)
	if err != nil {
		return err
	}
	p, err := ops.Promote(ctx, t, stage, revision)
	if err != nil {
		return err
	}
	fmt.Fprintln(f.streams.Out, view.Promoted(name, p))
	return nil
}

func newAbortCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "abort ROLLOUT",
		Short: "Stop the revision a Rollout rolls out where it is",
		Long: `Stop the revision in status.revision where it is (annotation ` + magosv1.AbortAnnotation + `):
no further stage is admitted and Workspaces not yet applied keep their
revision. A newer revision rolls out as usual.`,
		Example: `  kubectl magos abort release`,
		Args:    args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			t, err := f.target(a[0])
			if err != nil {
				return err
			}
			ro, err := ops.Abort(cmd.Context(), t)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.streams.Out, "Rollout %s: revision %s aborted\n", ro.Name, ro.Status.Revision)
			return nil
		},
	}
}
