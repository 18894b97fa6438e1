package command

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
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
	t, err := targetOf(f, name)
	if err != nil {
		return err
	}
	ro := &magosv1.Rollout{}
	var p magosv1.Promotion
	if err := t.update(ctx, ro, func() error {
		if p, err = promotion(ro, stage, revision); err != nil {
			return err
		}
		if !slices.Contains(ro.Spec.Promotions, p) {
			ro.Spec.Promotions = append(ro.Spec.Promotions, p)
		}
		return nil
	}); err != nil {
		return err
	}
	fmt.Fprintf(f.streams.Out, "Rollout %s: stage %s promoted for revision %s\n", name, p.Stage, p.Revision)
	return nil
}

// promotion is the spec.promotions entry that admits stage for revision
// (default: the one rolled out); refused for a stage the Rollout lacks.
func promotion(ro *magosv1.Rollout, stage, revision string) (magosv1.Promotion, error) {
	names := make([]string, 0, len(ro.Spec.Stages))
	for _, s := range ro.Spec.Stages {
		names = append(names, s.Name)
	}
	if !slices.Contains(names, stage) {
		return magosv1.Promotion{}, refused("Rollout %s has no stage %q; its stages are: %s", ro.Name, stage, strings.Join(names, ", "))
	}
	if revision == "" {
		revision = ro.Status.Revision
	}
	if revision == "" {
		return magosv1.Promotion{}, refused("Rollout %s has no revision yet (status.revision); pass --revision", ro.Name)
	}
	return magosv1.Promotion{Stage: stage, Revision: revision}, nil
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
			t, err := targetOf(f, a[0])
			if err != nil {
				return err
			}
			ro := &magosv1.Rollout{}
			if err := t.update(cmd.Context(), ro, func() error {
				if ro.Status.Revision == "" {
					return refused("Rollout %s rolls out no revision yet (status.revision is empty): nothing to abort", ro.Name)
				}
				setAnnotation(ro, magosv1.AbortAnnotation, ro.Status.Revision)
				return nil
			}); err != nil {
				return err
			}
			fmt.Fprintf(f.streams.Out, "Rollout %s: revision %s aborted\n", ro.Name, ro.Status.Revision)
			return nil
		},
	}
}
