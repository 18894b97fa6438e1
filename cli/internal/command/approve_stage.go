package command

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// One review per stage: a Rollout's stage often holds several Workspaces
// whose plans are the same change (one module, one revision, one
// environment's worth of regions). approve --stage reads each one's
// stored plan, groups the plans that are the same change (plan diff's
// comparison), and approves the group in one step, with an entry per
// Workspace naming that Workspace's own plan ID and digest: the apply-time
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
		fmt.Fprintf(out, "  %s\n", strings.Join(g, ", "))
	}
	var chosen []string
	switch {
	case len(groups) == 0:
		return refused("no Workspace of stage %s awaits approval", stageName)
	case o.like != "":
		i := slices.IndexFunc(groups, func(g []string) bool { return slices.Contains(g, o.like) })
		if i < 0 {
			return refused("Workspace %s is not one of stage %s's awaiting approval", o.like, stageName)
		}
		chosen = groups[i]
	case len(groups) > 1:
		return refused("the stage's plans are %d different changes: review them (kubectl magos plan diff %s --against %s) and approve one change at a time with --like WORKSPACE",
			len(groups), groups[1][0], groups[0][0])
	default:
		chosen = groups[0]
	}
	for _, name := range chosen {
		if _, err := approveOne(ctx, f, name, ""); err != nil {
			return err
		}
	}
	return nil
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
	_, err := approvable(ws, "")
	return err == nil
}

// distinctPlans groups the members whose plans include takes by the
// change their plans make, not comparing the ignored attributes: members
// whose plans are the same change share a group. counted is how many were
// taken.
func distinctPlans(ctx context.Context, t *target, members []string, include func(*magosv1.Workspace) bool, ignore []string) (groups [][]string, counted int, _ error) {
	var changes []map[string]plannedChange
	for _, name := range members {
		ws := &magosv1.Workspace{}
		if err := t.c.Get(ctx, clientKey(t.key.Namespace, name), ws); err != nil {
			return nil, 0, err
		}
		if !include(ws) {
			continue
		}
		counted++
		ch, _, err := loadChanges(ctx, t.planGetter(), ws, ignore)
		if err != nil {
			return nil, 0, err
		}
		i := slices.IndexFunc(changes, func(other map[string]plannedChange) bool { return writeDiff(io.Discard, "", "", ch, other) == 0 })
		if i < 0 {
			changes = append(changes, ch)
			groups = append(groups, nil)
			i = len(groups) - 1
		}
		groups[i] = append(groups[i], name)
	}
	return groups, counted, nil
}
