package command

import (
	"context"
	"fmt"
	"slices"
	"strings"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// One review per stage: a Rollout's stage often holds several Workspaces
// whose plans are the same change (one module, one revision, one
// environment's worth of regions). approve --stage reads each one's
// stored plan, groups the plans that are the same change (the digest of
// the whole change, change.go), and approves the group in one step, with
// an entry per Workspace naming the plan ID and digest that was compared,
// refused for a Workspace whose plan is another by then: the apply-time
// proof of each plan is unchanged.

// approveStage approves the plans of stage ROLLOUT/STAGE's Workspaces that
// are the same change as like's (default: the only distinct plan).
func (o *approveOptions) approveStage(ctx context.Context, f *factory, stage string) error {
	rolloutName, stageName, ok := strings.Cut(stage, "/")
	if !ok || rolloutName == "" || stageName == "" {
		return usageError("--stage takes ROLLOUT/STAGE, not %q", stage)
	}
	t, err := targetOf(f, rolloutName)
	if err != nil {
		return err
	}
	ro := &magosv1.Rollout{}
	if err := t.get(ctx, ro); err != nil {
		return err
	}
	members, err := stageMembers(ro, stageName)
	if err != nil {
		return err
	}
	groups, waiting, err := distinctPlans(ctx, t, members, awaitsApproval, o.ignore)
	if err != nil {
		return err
	}
	out := f.streams.Out
	fmt.Fprintf(out, "Stage %s of Rollout %s: %d Workspace(s), %d awaiting approval, %d distinct plan(s)\n",
		stageName, rolloutName, len(members), waiting, len(groups))
	for _, g := range groups {
		fmt.Fprintf(out, "  %s\n", strings.Join(memberNames(g), ", "))
	}
	var chosen []stagePlan
	switch {
	case len(groups) == 0:
		return refused("no Workspace of stage %s awaits approval", stageName)
	case o.like != "":
		i := slices.IndexFunc(groups, func(g []stagePlan) bool { return slices.Contains(memberNames(g), o.like) })
		if i < 0 {
			return refused("Workspace %s is not one of stage %s's awaiting approval", o.like, stageName)
		}
		chosen = groups[i]
	case len(groups) > 1:
		return refused("the stage's plans are %d different changes: review them (kubectl magos plan diff %s --against %s) and approve one change at a time with --like WORKSPACE",
			len(groups), groups[1][0].name, groups[0][0].name)
	default:
		chosen = groups[0]
	}
	for _, m := range chosen {
		if _, err := approveOne(ctx, f, m.name, m.plan); err != nil {
			return err
		}
	}
	return nil
}

// stagePlan is a stage member's plan as compared: the plan an approval
// names (ID and digest) and the digest of the change it makes.
type stagePlan struct {
	name   string
	plan   planRef
	change string
}

// memberNames are the names of the members of a group.
func memberNames(g []stagePlan) []string {
	names := make([]string, len(g))
	for i, m := range g {
		names[i] = m.name
	}
	return names
}

// groupByChange groups plans by the change they make, in the order each
// change first appears.
func groupByChange(plans []stagePlan) [][]stagePlan {
	var groups [][]stagePlan
	index := map[string]int{}
	for _, p := range plans {
		i, ok := index[p.change]
		if !ok {
			i = len(groups)
			index[p.change] = i
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
	return nil, refused("Rollout %s has no stage %q in its status", ro.Name, stage)
}

// awaitsApproval says whether ws has a plan that may be approved.
func awaitsApproval(ws *magosv1.Workspace) bool {
	_, err := approvable(ws, planRef{})
	return err == nil
}

// distinctPlans groups the members whose plans include takes by the
// change their plans make (the digest of the whole change), not comparing
// the ignored attributes: members whose plans are the same change share a
// group. counted is how many were taken.
func distinctPlans(ctx context.Context, t *target, members []string, include func(*magosv1.Workspace) bool, ignore []string) (groups [][]stagePlan, counted int, _ error) {
	var plans []stagePlan
	for _, name := range members {
		ws := &magosv1.Workspace{}
		if err := t.c.Get(ctx, clientKey(t.key.Namespace, name), ws); err != nil {
			return nil, 0, err
		}
		if !include(ws) {
			continue
		}
		counted++
		ch, p, err := loadChanges(ctx, t.planGetter(), ws, ignore)
		if err != nil {
			return nil, 0, err
		}
		plans = append(plans, stagePlan{name: name, plan: planRef{ID: p.ID, Digest: p.Digest}, change: ch.digest()})
	}
	return groupByChange(plans), counted, nil
}
