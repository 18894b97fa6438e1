package command

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
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
					return usageError("--stage approves each Workspace's current plan: --plan and --wait take one WORKSPACE")
				}
				return o.approveStage(cmd.Context(), f, o.stage)
			case o.stage == "" && len(a) == 1:
				if o.like != "" || len(o.ignore) > 0 {
					return usageError("--like and --ignore-attributes compare the plans of a stage: they take --stage")
				}
				return o.run(cmd.Context(), f, a[0])
			}
			return usageError("approve takes a WORKSPACE or --stage ROLLOUT/STAGE")
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
	id, err := approveOne(ctx, f, name, planRef{ID: o.plan})
	if err != nil {
		return err
	}
	if !o.wait {
		return nil
	}
	t, err := targetOf(f, name)
	if err != nil {
		return err
	}
	ws, err := t.waitWorkspace(ctx, o.timeout, "apply plan "+id, func(ws *magosv1.Workspace) (bool, error) { return approvedApplied(ws, id) })
	if err != nil {
		return err
	}
	fmt.Fprintf(f.streams.Out, "Workspace %s: plan %s applied (revision %s)\n", name, id, ws.Status.LastApplied.Revision)
	return nil
}

// planRef names a plan: its ID and the digest of its plan JSON.
type planRef struct{ ID, Digest string }

// approveOne approves Workspace name's plan in the user's name, with an
// entry naming its ID and digest, and returns the plan's ID. With want's
// ID (and digest) set, the plan must still be that one when the entry is
// written.
func approveOne(ctx context.Context, f *factory, name string, want planRef) (string, error) {
	t, err := targetOf(f, name)
	if err != nil {
		return "", err
	}
	me, err := whoAmI(ctx, t.c)
	if err != nil {
		return "", err
	}
	ws := &magosv1.Workspace{}
	var id string
	if err := t.update(ctx, ws, func() error {
		if id, err = approvable(ws, want); err != nil {
			return err
		}
		ws.Spec.Approvals = withApproval(ws.Spec.Approvals, magosv1.Approval{
			Plan: id, Digest: ws.Status.Plan.Digest, User: me.Username, Groups: me.Groups})
		return nil
	}); err != nil {
		return "", err
	}
	fmt.Fprintf(f.streams.Out, "Workspace %s: plan %s approved by %s (%s)\n", name, id, me.Username, planCounts(ws.Status.Plan))
	return id, nil
}

// whoAmI is the user the API authenticates this client as, with the
// groups an approval may name (all but system:authenticated, which every
// user has).
func whoAmI(ctx context.Context, c client.Client) (authenticationv1.UserInfo, error) {
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return authenticationv1.UserInfo{}, fmt.Errorf("asking the API who you are (SelfSubjectReview, Kubernetes 1.28 or later): %w", err)
	}
	me := review.Status.UserInfo
	if me.Username == "" {
		return me, refused("the API did not say who you are: an approval needs a username")
	}
	me.Groups = slices.DeleteFunc(slices.Clone(me.Groups), func(g string) bool { return g == "system:authenticated" })
	return me, nil
}

// withApproval is entries with a, replacing its user's entry for the same
// plan, without entries for other plans (they approve nothing any more).
func withApproval(entries []magosv1.Approval, a magosv1.Approval) []magosv1.Approval {
	out := slices.DeleteFunc(slices.Clone(entries), func(e magosv1.Approval) bool { return e.Plan != a.Plan || e.User == a.User })
	return append(out, a)
}

// approvable is the ID of the Workspace's plan awaiting approval; with
// want's ID and digest, only if the plan is still that one.
func approvable(ws *magosv1.Workspace, want planRef) (string, error) {
	p := ws.Status.PendingPlan()
	waiting := ws.Status.Phase == magosv1.PhaseAwaitingApproval || ws.Status.Phase == magosv1.PhaseAwaitingPromotion
	if p == nil || !waiting {
		return "", refused("Workspace %s has no plan awaiting approval (phase %s): nothing to approve",
			ws.Name, orNone(string(ws.Status.Phase)))
	}
	if p.Policy != nil && !p.Policy.Passed {
		return "", refused("plan %s of Workspace %s failed the policy gate and cannot be applied: %s", p.ID, ws.Name, p.Policy.Message)
	}
	if want.ID != "" && want.ID != p.ID {
		return "", refused("the plan of Workspace %s changed: the current plan is %s, not %s; review it with `kubectl magos plan show %s` and approve %s",
			ws.Name, p.ID, want.ID, ws.Name, p.ID)
	}
	if want.Digest != "" && want.Digest != p.Digest {
		return "", refused("the plan %s of Workspace %s changed: its digest is %s, not the %s compared; compare it again",
			p.ID, ws.Name, p.Digest, want.Digest)
	}
	if p.Digest == "" {
		return "", refused("plan %s of Workspace %s has no digest yet: an approval names one; retry in a moment", p.ID, ws.Name)
	}
	return p.ID, nil
}

// approvedApplied says whether plan id was applied, and fails when it no
// longer can be: its apply failed, a newer plan replaced it, the Workspace
// stalled.
func approvedApplied(ws *magosv1.Workspace, id string) (bool, error) {
	st := &ws.Status
	if st.LastApplied != nil && st.LastApplied.PlanID == id {
		return true, nil
	}
	if r := st.LastRun(); r != nil && r.Phase == magosv1.RunApply && r.PlanID == id && r.Result != magosv1.ResultSucceeded {
		return false, failed("the apply of plan %s failed (%s): %s", id, r.Reason, r.Message)
	}
	if st.Plan != nil && st.Plan.ID != id {
		return false, failed("plan %s of Workspace %s was replaced by plan %s before it was applied: %s",
			id, ws.Name, st.Plan.ID, readyMessage(st.Conditions))
	}
	return false, stalledError(ws)
}
