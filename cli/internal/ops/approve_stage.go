package ops

import (
	"context"
	"slices"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/failure"
)

// One review per stage: a Rollout's stage often holds several Workspaces
// whose plans are the same change (one module, one revision, one
// environment's worth of regions). approve --stage reads each one's
// stored plan, groups the plans that are the same change (the digest of
// the whole change, package planchange), and approves the group in one
// step, with an entry per Workspace naming the plan ID and digest that
// was compared, refused for a Workspace whose plan is another by then:
// the apply-time proof of each plan is unchanged.

// StagePlan is a stage member's plan as compared: the plan an approval
// names (ID and digest) and the digest of the change it makes.
type StagePlan struct {
	Name   string
	Plan   PlanRef
	Change string
}

// StageReview is the plans of a Rollout stage's Workspaces awaiting
// approval, grouped by the change they make.
type StageReview struct {
	// Members are the stage's Workspaces; Waiting how many await approval.
	Members []string
	Waiting int
	// Groups are the plans awaiting approval, by change.
	Groups [][]StagePlan
}

// ReviewStage groups the plans awaiting approval of stage's Workspaces in
// the target Rollout by the change they make, not comparing the ignored
// attributes.
func ReviewStage(ctx context.Context, t *Target, stage string, ignore []string) (StageReview, error) {
	ro := &magosv1.Rollout{}
	if err := t.Get(ctx, ro); err != nil {
		return StageReview{}, err
	}
	members, err := stageMembers(ro, stage)
	if err != nil {
		return StageReview{}, err
	}
	groups, waiting, err := DistinctPlans(ctx, t, members, awaitsApproval, ignore)
	if err != nil {
		return StageReview{}, err
	}
	return StageReview{Members: members, Waiting: waiting, Groups: groups}, nil
}

// Choose is the group of plans to approve: the one holding Workspace like
// when given, else the only one; refused when there is none to approve,
// like is in none, or the plans are different changes.
func (r StageReview) Choose(stage, like string) ([]StagePlan, error) {
	groups := r.Groups
	switch {
	case len(groups) == 0:
		return nil, failure.Refused("no Workspace of stage %s awaits approval", stage)
	case like != "":
		i := slices.IndexFunc(groups, func(g []StagePlan) bool { return slices.Contains(MemberNames(g), like) })
		if i < 0 {
			return nil, failure.Refused("Workspace %s is not one of stage %s's awaiting approval", like, stage)
		}
		return groups[i], nil
	case len(groups) > 1:
		return nil, failure.Refused("the stage's plans are %d different changes: review them (kubectl magos plan diff %s --against %s) and approve one change at a time with --like WORKSPACE",
			len(groups), groups[1][0].Name, groups[0][0].Name)
	}
	return groups[0], nil
}

// MemberNames are the names of the members of a group.
func MemberNames(g []StagePlan) []string {
	names := make([]string, len(g))
	for i, m := range g {
		names[i] = m.Name
	}
	return names
}

// groupByChange groups plans by the change they make, in the order each
// change first appears.
func groupByChange(plans []StagePlan) [][]StagePlan {
	var groups [][]StagePlan
	index := map[string]int{}
	for _, p := range plans {
		i, ok := index[p.Change]
		if !ok {
			i = len(groups)
			index[p.Change] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], p)
	}
	return groups
}

// stageMembers are the Workspaces the Rollout's status puts in stage.
func stageMembers(ro *magosv1.Rollout, stage string) ([]string, error) {
	for _, st := range ro.Status.Stages {
		if st.Name != stage {
			continue
		}
		var names []string
		for _, w := range st.Workspaces {
			names = append(names, w.Name)
		}
		return names, nil
	}
	return nil, failure.Refused("Rollout %s has no stage %q in its status", ro.Name, stage)
}

// awaitsApproval says whether ws has a plan that may be approved.
func awaitsApproval(ws *magosv1.Workspace) bool {
	_, err := Approvable(ws, PlanRef{})
	return err == nil
}

// DistinctPlans groups the members (Workspaces in the target's namespace)
// whose plans include takes by the change their plans make (the digest of
// the whole change), not comparing the ignored attributes: members whose
// plans are the same change share a group. counted is how many were
// taken.
func DistinctPlans(ctx context.Context, t *Target, members []string, include func(*magosv1.Workspace) bool, ignore []string) (groups [][]StagePlan, counted int, _ error) {
	var plans []StagePlan
	for _, name := range members {
		ws := &magosv1.Workspace{}
		if err := t.Client.Get(ctx, clientKey(t.Key.Namespace, name), ws); err != nil {
			return nil, 0, err
		}
		if !include(ws) {
			continue
		}
		counted++
		ch, p, err := LoadChanges(ctx, t.PlanGetter(), ws, ignore)
		if err != nil {
			return nil, 0, err
		}
		plans = append(plans, StagePlan{Name: name, Plan: PlanRef{ID: p.ID, Digest: p.Digest}, Change: ch.Digest()})
	}
	return groupByChange(plans), counted, nil
}
