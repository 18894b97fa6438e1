package command

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/view"
)

func newTreeCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "tree PROJECT",
		Short: "Show a Project, its Rollouts' stages and its Workspaces with their status",
		Example: `  kubectl magos tree app
  kubectl magos tree app -n infra`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error { return tree(cmd.Context(), f, a[0]) },
	}
}

func tree(ctx context.Context, f *factory, name string) error {
	t, err := f.target(name)
	if err != nil {
		return err
	}
	tr, err := ops.ReadTree(ctx, t)
	if err != nil {
		return err
	}
	reviews := map[string]string{}
	for stage, r := range tr.Reviews {
		reviews[stage] = view.StageReviewLine(r)
	}
	view.WriteTree(f.streams.Out, tr.Project, tr.Rollouts, tr.Workspaces, reviews)
	return nil
}
