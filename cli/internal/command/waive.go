package command

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/ops"
)

type waiveOptions struct {
	plan      string
	policies  []string
	expiresIn time.Duration
	reason    string
}

func newWaiveCommand(f *factory) *cobra.Command {
	o := &waiveOptions{}
	cmd := &cobra.Command{
		Use:   "waive WORKSPACE --plan ID --reason TEXT [--policy NAME]... [--expires-in D]",
		Short: "Waive a policy denial for one plan, in your name (a Kyverno PolicyException)",
		Long: `Let one plan of a Workspace past the policies that denied it, by creating a
Kyverno PolicyException in the Workspace's namespace bound to the Workspace
and to the plan's digest: a new plan, even of the same Workspace, is not
waived. The exception expires (--expires-in); a plan still waiting for an
approval or a promotion then is evaluated again. It records who created it
(as the Kubernetes API authenticates you; the chart's admission policy
refuses any other name) and why. The Workspace's status lists each denial
it waived (status.plan.policy.violations[].waivedBy) and an event says so.

--policy defaults to every policy that denied the plan. Who may waive is
who may create policyexceptions.policies.kyverno.io in the namespace.`,
		Example: `  kubectl magos waive hello --plan 8f3c1a2b9e --reason "INC-1234: replace the bucket"
  kubectl magos waive hello --plan 8f3c1a2b9e --policy no-destroy --expires-in 2h --reason "planned migration"`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if o.plan == "" || strings.TrimSpace(o.reason) == "" {
				return failure.Usage("waive needs --plan ID (the plan you reviewed) and --reason")
			}
			if o.expiresIn <= 0 {
				return failure.Usage("--expires-in must be positive: a waiver expires")
			}
			return o.run(cmd.Context(), f, a[0])
		},
	}
	cmd.Flags().StringVar(&o.plan, "plan", "", "the plan to waive for: refused unless it is the Workspace's current plan")
	cmd.Flags().StringSliceVar(&o.policies, "policy", nil, "a policy to waive, as status names it (name, or namespace/name); default: every policy that denied the plan")
	cmd.Flags().DurationVar(&o.expiresIn, "expires-in", 24*time.Hour, "how long the waiver applies")
	cmd.Flags().StringVar(&o.reason, "reason", "", "why the denial is waived (kept in the exception)")
	return cmd
}

func (o *waiveOptions) run(ctx context.Context, f *factory, name string) error {
	t, err := f.target(name)
	if err != nil {
		return err
	}
	w, err := ops.Waive(ctx, t, ops.WaiverRequest{Plan: o.plan, Policies: o.policies, ExpiresIn: o.expiresIn, Reason: o.reason})
	if err != nil {
		return err
	}
	fmt.Fprintf(f.streams.Out, "PolicyException %s/%s waives %s for plan %s of Workspace %s until %s (created by %s)\n",
		t.Key.Namespace, w.Name, strings.Join(w.Policies, ", "), w.PlanID, name, w.Expires.Format(time.RFC3339), w.User)
	return nil
}
