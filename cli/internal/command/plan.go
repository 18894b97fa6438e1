package command

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/planrender"
	"github.com/magos-dev/magos/cli/internal/view"
)

func newPlanCommand(f *factory) *cobra.Command {
	plan := &cobra.Command{
		Use:     "plan",
		Short:   "Read the stored plan of a Workspace",
		Example: "  kubectl magos plan show hello",
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return failure.Usage("plan needs a subcommand: plan show WORKSPACE, plan diff WORKSPACE --against OTHER")
		},
	}
	var asJSON, engineText bool
	show := &cobra.Command{
		Use:   "show WORKSPACE",
		Short: "Show the stored plan of a Workspace with its policy verdict",
		Long: `Show the current plan of a Workspace, rendered here from the plan JSON whose
digest status records (the JSON the policy gate evaluated, an approval
approves and the apply proves it applies; sensitive values are not shown),
then the policy verdict and its violations from status. With --json, print
that plan JSON.

The text the plan run printed is not shown as the plan: the run executed the
configuration's code, which can write that text, and no digest covers it.
--engine-text prints it after the rendering, marked as not verified. A plan
applied without a gate (in the run that made it) has no plan JSON to render:
its text is shown, marked as not verified.`,
		Example: `  kubectl magos plan show hello
  kubectl magos plan show hello --json | jq '.resource_changes[].address'`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if asJSON && engineText {
				return failure.Usage("plan show takes --json or --engine-text, not both")
			}
			return showPlan(cmd.Context(), f, a[0], asJSON, engineText)
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print the plan JSON (the engine's show -json output)")
	show.Flags().BoolVar(&engineText, "engine-text", false, "also print the text the plan run stored (not verified: no digest covers it)")
	plan.AddCommand(show, newPlanDiffCommand(f))
	return plan
}

func showPlan(ctx context.Context, f *factory, name string, asJSON, engineText bool) error {
	t, err := f.target(name)
	if err != nil {
		return err
	}
	ws, err := t.ReadWorkspace(ctx)
	if err != nil {
		return err
	}
	p := ws.Status.Plan
	if p == nil {
		return failure.NotFound("Workspace %s has no plan yet (phase %s)", name, view.OrNone(string(ws.Status.Phase)))
	}
	g := t.PlanGetter()
	out := f.streams.Out
	if asJSON {
		stored, err := ops.LoadPlanJSON(ctx, g, name, p)
		if err != nil {
			return err
		}
		if len(stored.JSON) == 0 && p.AppliedWithoutGate {
			return failure.NotFound("plan %s of Workspace %s was applied without a gate in the run that made it, which renders no plan JSON; "+
				"kubectl magos plan show %s prints what the engine printed", p.ID, name, name)
		}
		_, err = out.Write(stored.JSON)
		return err
	}
	return writePlan(ctx, out, g, name, p, ops.SecretVariables(ctx, t.Client, ws), engineText)
}

// writePlan writes plan p of Workspace name as plan show shows it: what it
// is, who approved it, the readable plan with where it comes from (masked
// as opts says), the run's own text when asked for, and the policy
// verdict.
func writePlan(ctx context.Context, out io.Writer, g planstore.Getter, name string, p *magosv1.PlanStatus, opts planrender.Options, engineText bool) error {
	shown, err := ops.ReadablePlan(ctx, g, name, p, opts)
	if err != nil {
		return err
	}
	withRunText := engineText && shown.Verified
	var runText string
	if withRunText {
		if runText, err = ops.StoredText(ctx, g, name, p); err != nil {
			return err
		}
	}
	view.WritePlan(out, name, p, shown, withRunText, runText)
	return nil
}
