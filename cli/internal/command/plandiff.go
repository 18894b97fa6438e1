package command

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/view"
)

func newPlanDiffCommand(f *factory) *cobra.Command {
	var against string
	var applied bool
	var ignore []string
	cmd := &cobra.Command{
		Use:   "diff WORKSPACE --against OTHER [--applied]",
		Short: "Compare the stored plans of two Workspaces, resource by resource",
		Long: `Compare the current plan of WORKSPACE with the current plan of OTHER (e.g. prod's
plan with the one dev applied): which resource changes are the same (address,
actions, planned values, which values are unknown or sensitive, replacement
paths, provider…), which differ and in which attributes or fields, and which
are in one plan only; then whether the outputs, the configuration the plan
is applied with (provisioners, expressions, module calls) and the engine
version differ. Values are never printed (a plan's values may be
sensitive): only the names of what differs. Exit code 0 when the plans are
the same change, 1 when they differ (as diff does).

With --applied, OTHER's plan must be the one it applied (status.lastApplied):
prod's plan is compared with what dev applied, and the command refuses when
dev has planned again since. --ignore-attributes leaves out attributes whose
values differ by design from one Workspace to the next (a name, a region tag).`,
		Example: `  kubectl magos plan diff prod --against dev
  kubectl magos plan diff prod --against dev --applied   # with what dev applied`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if against == "" {
				return failure.Usage("plan diff needs --against OTHER: the Workspace whose plan to compare with")
			}
			return diffPlans(cmd.Context(), f, a[0], against, applied, ignore)
		},
	}
	cmd.Flags().StringVar(&against, "against", "", "the Workspace (same namespace) whose current plan to compare with")
	cmd.Flags().BoolVar(&applied, "applied", false, "compare with the plan OTHER applied, refusing when it planned again since")
	cmd.Flags().StringSliceVar(&ignore, "ignore-attributes", nil, "top-level attributes whose planned values are not compared (e.g. values that name each Workspace: tags,name)")
	return cmd
}

func diffPlans(ctx context.Context, f *factory, name, other string, applied bool, ignore []string) error {
	t, err := f.target(name)
	if err != nil {
		return err
	}
	ws, err := t.ReadWorkspace(ctx)
	if err != nil {
		return err
	}
	a, planA, err := ops.LoadChanges(ctx, t.PlanGetter(), ws, ignore)
	if err != nil {
		return err
	}
	o, err := f.target(other)
	if err != nil {
		return err
	}
	otherWS, err := o.ReadWorkspace(ctx)
	if err != nil {
		return err
	}
	what := "plan %s of Workspace %s"
	if applied {
		if err := ops.AppliedIsCurrent(otherWS); err != nil {
			return err
		}
		what = "plan %s that Workspace %s applied (revision " + otherWS.Status.LastApplied.Revision + ")"
	}
	b, planB, err := ops.LoadChanges(ctx, t.PlanGetter(), otherWS, ignore)
	if err != nil {
		return err
	}
	out := f.streams.Out
	if len(ignore) > 0 {
		what += " (not comparing " + strings.Join(ignore, ", ") + ")"
	}
	fmt.Fprintf(out, "Plan %s of Workspace %s against "+what+":\n", planA.ID, name, planB.ID, other)
	differ, parts := view.WriteDiff(out, name, other, a, b)
	switch {
	case differ == 0 && len(parts) == 0:
		fmt.Fprintln(out, "The plans are the same change.")
		return nil
	case len(parts) == 0:
		return failure.Failed("the plans differ in %d resource change(s)", differ)
	}
	return failure.Failed("the plans differ in %d resource change(s) and in %s", differ, strings.Join(parts, "; "))
}
