package command

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/view"
)

type approveOptions struct {
	plan    string
	stage   string
	like    string
	ignore  []string
	wait    bool
	timeout time.Duration
}

func newApproveCommand(f *factory) *cobra.Command {
	o := &approveOptions{}
	cmd := &cobra.Command{
		Use:   "approve (WORKSPACE | --stage ROLLOUT/STAGE)",
		Short: "Approve the plan a Workspace waits on, in your name (spec.approvals)",
		Long: `Approve the current plan of a Workspace with approval: Manual by adding an
entry to spec.approvals: the plan's ID and digest (status.plan.id, .digest),
and your username and groups as the Kubernetes API authenticates you (the
chart's admission policy refuses any other name). Entries for earlier plans
are dropped. With --plan, the approval is refused unless the current plan is
that ID, so a plan that changed after you read it is never approved by
mistake. The Workspace's status then records who approved
(status.plan.approvals; kubectl magos get -o wide, plan show).

With --stage ROLLOUT/STAGE, one review approves the stage: the plans of the
stage's Workspaces awaiting approval are compared as plan diff compares them
(the whole change: resource changes with their unknown and sensitive values,
outputs, configuration, engine version), and when they are all the same
change each one is approved, in an entry naming the plan ID and digest that
was compared; a Workspace whose plan changed since is refused, not approved.
When they are different changes, --like WORKSPACE approves those that are the
same change as that Workspace's. --ignore-attributes leaves out of the
comparison attributes whose values name each Workspace (a name, a region
tag): each Workspace is still approved for its own plan.`,
		Example: `  kubectl magos plan show hello             # read the plan and note its ID
  kubectl magos approve hello --plan 8f3c…   # approve exactly that plan
  kubectl magos approve hello --wait         # approve and wait for the apply
  kubectl magos approve --stage release/prod # one review for the stage's same plans`,
		Args: args(0, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			switch {
			case o.stage != "" && len(a) == 0:
				if o.plan != "" || o.wait {
					return failure.Usage("--stage approves each Workspace's current plan: --plan and --wait take one WORKSPACE")
				}
				return o.approveStage(cmd.Context(), f, o.stage)
			case o.stage == "" && len(a) == 1:
				if o.like != "" || len(o.ignore) > 0 {
					return failure.Usage("--like and --ignore-attributes compare the plans of a stage: they take --stage")
				}
				return o.run(cmd.Context(), f, a[0])
			}
			return failure.Usage("approve takes a WORKSPACE or --stage ROLLOUT/STAGE")
		},
	}
	cmd.Flags().StringVar(&o.stage, "stage", "", "approve the plans of a Rollout stage's Workspaces that are the same change (ROLLOUT/STAGE)")
	cmd.Flags().StringVar(&o.like, "like", "", "with --stage: approve the plans that are the same change as this Workspace's")
	cmd.Flags().StringSliceVar(&o.ignore, "ignore-attributes", nil, "with --stage: top-level attributes whose planned values may differ between the Workspaces (e.g. a name or region tag)")
	cmd.Flags().StringVar(&o.plan, "plan", "", "approve only if the current plan has this ID")
	cmd.Flags().BoolVar(&o.wait, "wait", false, "wait until the plan is applied or the Workspace fails")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 10*time.Minute, "how long --wait waits")
	return cmd
}

func (o *approveOptions) run(ctx context.Context, f *factory, name string) error {
	t, err := f.target(name)
	if err != nil {
		return err
	}
	id, err := approve(ctx, f, t, ops.PlanRef{ID: o.plan})
	if err != nil {
		return err
	}
	if !o.wait {
		return nil
	}
	ws, err := t.WaitWorkspace(ctx, o.timeout, "apply plan "+id, func(ws *magosv1.Workspace) (bool, error) { return ops.ApprovedApplied(ws, id) })
	if err != nil {
		return err
	}
	fmt.Fprintf(f.streams.Out, "Workspace %s: plan %s applied (revision %s)\n", name, id, ws.Status.LastApplied.Revision)
	return nil
}

// approve approves the target Workspace's plan (want, when named) and
// says so; it returns the plan's ID.
func approve(ctx context.Context, f *factory, t *ops.Target, want ops.PlanRef) (string, error) {
	a, err := ops.Approve(ctx, t, want)
	if err != nil {
		return "", err
	}
	fmt.Fprintln(f.streams.Out, view.Approved(t.Key.Name, a.PlanID, a.User, a.Plan))
	return a.PlanID, nil
}

// approveStage approves the plans of stage ROLLOUT/STAGE's Workspaces that
// are the same change as like's (default: the only distinct plan), after
// saying how the stage's plans group.
func (o *approveOptions) approveStage(ctx context.Context, f *factory, stage string) error {
	rolloutName, stageName, ok := strings.Cut(stage, "/")
	if !ok || rolloutName == "" || stageName == "" {
		return failure.Usage("--stage takes ROLLOUT/STAGE, not %q", stage)
	}
	t, err := f.target(rolloutName)
	if err != nil {
		return err
	}
	review, err := ops.ReviewStage(ctx, t, stageName, o.ignore)
	if err != nil {
		return err
	}
	out := f.streams.Out
	fmt.Fprintf(out, "Stage %s of Rollout %s: %d Workspace(s), %d awaiting approval, %d distinct plan(s)\n",
		stageName, rolloutName, len(review.Members), review.Waiting, len(review.Groups))
	for _, g := range review.Groups {
		fmt.Fprintf(out, "  %s\n", strings.Join(ops.MemberNames(g), ", "))
	}
	chosen, err := review.Choose(stageName, o.like)
	if err != nil {
		return err
	}
	for _, m := range chosen {
		if _, err := approve(ctx, f, ops.NewTarget(t.Client, t.Key.Namespace, m.Name), m.Plan); err != nil {
			return err
		}
	}
	return nil
}
