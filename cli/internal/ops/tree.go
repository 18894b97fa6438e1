package ops

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/view"
)

// Tree is a Project with the Rollouts and Workspaces of its namespace and
// the review of each Rollout stage's plans, by "ROLLOUT/STAGE".
type Tree struct {
	Project    *magosv1.Project
	Rollouts   []magosv1.Rollout
	Workspaces []magosv1.Workspace
	Reviews    map[string]view.StageReview
}

// ReadTree reads the target Project, the Rollouts and Workspaces of its
// namespace, and reviews the plans of each Rollout stage.
func ReadTree(ctx context.Context, t *Target) (Tree, error) {
	p := &magosv1.Project{}
	if err := t.Get(ctx, p); err != nil {
		return Tree{}, err
	}
	var ros magosv1.RolloutList
	var wss magosv1.WorkspaceList
	for _, l := range []client.ObjectList{&ros, &wss} {
		if err := t.Client.List(ctx, l, client.InNamespace(t.Key.Namespace)); err != nil {
			return Tree{}, err
		}
	}
	reviews := map[string]view.StageReview{}
	for _, ro := range ros.Items {
		for _, st := range ro.Status.Stages {
			reviews[ro.Name+"/"+st.Name] = reviewStagePlans(ctx, t, st)
		}
	}
	return Tree{Project: p, Rollouts: ros.Items, Workspaces: wss.Items, Reviews: reviews}, nil
}

// reviewStagePlans reviews the current plans with changes of a stage's
// Workspaces: how many distinct changes they make, who approved them and
// how many still await approval.
func reviewStagePlans(ctx context.Context, t *Target, st magosv1.StageStatus) view.StageReview {
	var members []string
	for _, w := range st.Workspaces {
		members = append(members, w.Name)
	}
	r := view.StageReview{Workspaces: len(members)}
	withChanges := func(ws *magosv1.Workspace) bool {
		p := ws.Status.Plan
		if p == nil || !p.HasChanges {
			return false
		}
		if ws.Status.Phase == magosv1.PhaseAwaitingApproval {
			r.Awaiting++
		}
		for _, a := range p.Approvals {
			r.Approvers = append(r.Approvers, a.User)
		}
		return true
	}
	groups, counted, err := DistinctPlans(ctx, t, members, withChanges, nil)
	r.Counted, r.Distinct, r.DistinctErr = counted, len(groups), err
	return r
}
