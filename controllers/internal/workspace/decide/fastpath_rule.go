package decide

import magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"

// The fast path. The apply-time proof (the stored plan rendered again and
// compared with the approved digest, its snapshot and backend checked)
// protects a decision: a person's approval, a policy verdict, a Rollout's
// admission, the review of a destroy. Where none of them decides on the
// rendered plan, a tampered plan gains its author nothing the apply
// identity does not already give, so the plan and its apply run in one
// Job (magosv1.RunPlanApply) with the apply identity and no proof.

// Deciders are what, besides the Workspace's spec, would decide on its
// next plan: looked up (decidersOf) only when its spec lets it take the
// fast path.
type Deciders struct {
	// Policies names the policies that select the Workspace, or says why
	// they could not be listed.
	Policies string
	// Rollout names the Rollout governing the Workspace's Project.
	Rollout string
	// Ignored names the NamespacedValidatingPolicies that select the
	// Workspace but may not gate it (policy.Selection.Ignored).
	Ignored []string
}

// gatedBy says what decides on the Workspace's next plan, so that it is
// planned and applied in separate Jobs with the proof; "" when nothing
// does and it takes the fast path. The first that holds:
//
//   - the cluster asks for separate Jobs always (--always-separate-plan-identity);
//   - a destroy (spec.mode Destroy or a deletion), or mode PlanOnly;
//   - approval Manual;
//   - a plan request that names addresses (-target, -replace);
//   - deciders not looked up;
//   - a policy selects the Workspace (cluster, Project or Workspace), or
//     the policies could not be listed;
//   - a Rollout governs the Workspace's Project.
//
// A policy or Rollout created while a fast run is in flight does not stop
// it, as with one created after an apply: it decides on the next plan.
func (f Facts) gatedBy() string {
	switch {
	case f.SeparatePlans:
		return "the cluster plans and applies in separate Jobs (--always-separate-plan-identity)"
	case f.planMode() == magosv1.PlanModeDestroy:
		return "a destroy is always reviewed"
	case !f.RolloutGated():
		return "mode " + string(f.Mode)
	case f.Approval == magosv1.ApprovalManual:
		return "approval is Manual"
	case f.Request.Scoped():
		return "plan request " + f.Request.ID + " names addresses"
	case f.Deciders == nil:
		return "the policies and Rollouts were not looked up"
	case f.Deciders.Policies != "":
		return f.Deciders.Policies
	case f.Deciders.Rollout != "":
		return "Rollout " + f.Deciders.Rollout + " admits revisions"
	}
	return ""
}

// MayRunFast says whether the Workspace's spec and the cluster let its
// next plan take the fast path, deciders aside: whether decidersOf is
// worth asking.
func (f Facts) MayRunFast() bool {
	g := f
	g.Deciders = &Deciders{}
	return g.gatedBy() == ""
}
