package ops

import (
	"context"
	"fmt"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
	"github.com/magos-dev/magos/cli/internal/view"
)

// PlanRef names a plan: its ID and the digest of its plan JSON.
type PlanRef struct{ ID, Digest string }

// Approved is an approval Approve wrote: the plan's ID, who approved it
// and the plan as the Workspace's status shows it.
type Approved struct {
	PlanID, User string
	Plan         *magosv1.PlanStatus
}

// Approve approves the target Workspace's plan in the user's name, with an
// entry naming its ID and digest. With want's ID (and digest) set, the
// plan must still be that one when the entry is written.
func Approve(ctx context.Context, t *Target, want PlanRef) (Approved, error) {
	me, err := WhoAmI(ctx, t.Client)
	if err != nil {
		return Approved{}, err
	}
	ws := &magosv1.Workspace{}
	var id string
	if err := t.Update(ctx, ws, func() error {
		if id, err = Approvable(ws, want); err != nil {
			return err
		}
		ws.Spec.Approvals = withApproval(ws.Spec.Approvals, magosv1.Approval{
			Plan: id, Digest: ws.Status.Plan.Digest, User: me.Username, Groups: me.Groups})
		return nil
	}); err != nil {
		return Approved{}, err
	}
	return Approved{PlanID: id, User: me.Username, Plan: ws.Status.Plan}, nil
}

// WhoAmI is the user the API authenticates this client as, with the
// groups an approval may name (all but system:authenticated, which every
// user has).
func WhoAmI(ctx context.Context, c client.Client) (authenticationv1.UserInfo, error) {
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return authenticationv1.UserInfo{}, fmt.Errorf("asking the API who you are (SelfSubjectReview, Kubernetes 1.28 or later): %w", err)
	}
	me := review.Status.UserInfo
	if me.Username == "" {
		return me, failure.Refused("the API did not say who you are: an approval needs a username")
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

// Approvable is the ID of the Workspace's plan awaiting approval; with
// want's ID and digest, only if the plan is still that one.
func Approvable(ws *magosv1.Workspace, want PlanRef) (string, error) {
	p := ws.Status.PendingPlan()
	waiting := ws.Status.Phase == magosv1.PhaseAwaitingApproval || ws.Status.Phase == magosv1.PhaseAwaitingPromotion
	if p == nil || !waiting {
		return "", failure.Refused("Workspace %s has no plan awaiting approval (phase %s): nothing to approve",
			ws.Name, view.OrNone(string(ws.Status.Phase)))
	}
	if p.Policy != nil && !p.Policy.Passed {
		return "", failure.Refused("plan %s of Workspace %s failed the policy gate and cannot be applied: %s", p.ID, ws.Name, p.Policy.Message)
	}
	if want.ID != "" && want.ID != p.ID {
		return "", failure.Refused("the plan of Workspace %s changed: the current plan is %s, not %s; review it with `kubectl magos plan show %s` and approve %s",
			ws.Name, p.ID, want.ID, ws.Name, p.ID)
	}
	if want.Digest != "" && want.Digest != p.Digest {
		return "", failure.Refused("the plan %s of Workspace %s changed: its digest is %s, not the %s compared; compare it again",
			p.ID, ws.Name, p.Digest, want.Digest)
	}
	if p.Digest == "" {
		return "", failure.Refused("plan %s of Workspace %s has no digest yet: an approval names one; retry in a moment", p.ID, ws.Name)
	}
	return p.ID, nil
}

// ApprovedApplied says whether plan id was applied, and fails when it no
// longer can be: its apply failed, a newer plan replaced it, the Workspace
// stalled.
func ApprovedApplied(ws *magosv1.Workspace, id string) (bool, error) {
	st := &ws.Status
	if st.LastApplied != nil && st.LastApplied.PlanID == id {
		return true, nil
	}
	if r := st.LastRun(); r != nil && r.Phase == magosv1.RunApply && r.PlanID == id && r.Result != magosv1.ResultSucceeded {
		return false, failure.Failed("the apply of plan %s failed (%s): %s", id, r.Reason, r.Message)
	}
	if st.Plan != nil && st.Plan.ID != id {
		return false, failure.Failed("plan %s of Workspace %s was replaced by plan %s before it was applied: %s",
			id, ws.Name, st.Plan.ID, view.ReadyMessage(st.Conditions))
	}
	return false, StalledError(ws)
}
