package workspace

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/policy"
)

// The fast path. The apply-time proof (the stored plan rendered again and
// compared with the approved digest, its snapshot and backend checked)
// protects a decision: a person's approval, a policy verdict, a Rollout's
// admission, the review of a destroy. Where none of them decides on the
// rendered plan, a tampered plan gains its author nothing the apply
// identity does not already give, so the plan and its apply run in one
// Job (magosv1.RunPlanApply) with the apply identity and no proof.

// deciders are what, besides the Workspace's spec, would decide on its
// next plan: looked up (decidersOf) only when its spec lets it take the
// fast path.
type deciders struct {
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
func (f facts) gatedBy() string {
	switch {
	case f.SeparatePlans:
		return "the cluster plans and applies in separate Jobs (--always-separate-plan-identity)"
	case f.planMode() == magosv1.PlanModeDestroy:
		return "a destroy is always reviewed"
	case !f.rolloutGated():
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

// mayRunFast says whether the Workspace's spec and the cluster let its
// next plan take the fast path, deciders aside: whether decidersOf is
// worth asking.
func (f facts) mayRunFast() bool {
	g := f
	g.Deciders = &deciders{}
	return g.gatedBy() == ""
}

// decidersOf looks up what would decide on ws's next plan besides its
// spec: the policies that select it, as the gate would select them, and
// the Rollout governing its Project.
func (r *Reconciler) decidersOf(ctx context.Context, ws *magosv1.Workspace, project *magosv1.Project) (*deciders, error) {
	d := &deciders{}
	namespaced, err := r.namespacedPoliciesAllowed(ctx, ws.Namespace)
	var selection policy.Selection
	if err == nil {
		selection, err = policy.Select(ctx, r.Client, policy.Scope{Namespace: ws.Namespace, Namespaced: namespaced},
			policySelectors(r.Options.Guards.ClusterPolicySelector, ws, project)...)
	}
	d.Ignored = selection.Ignored
	switch {
	case err != nil:
		d.Policies = fmt.Sprintf("the policies could not be listed (%v)", err)
	case len(selection.Policies) > 0:
		names := make([]string, 0, len(selection.Policies))
		for _, p := range selection.Policies {
			names = append(names, p.Name())
		}
		d.Policies = "policy " + strings.Join(names, ", ") + " selects the Workspace"
	}
	if ws.Spec.ProjectRef != nil {
		var list magosv1.RolloutList
		if err := r.List(ctx, &list, client.InNamespace(ws.Namespace)); err != nil {
			return nil, fmt.Errorf("listing Rollouts: %w", err)
		}
		if ro := magosv1.GoverningRollout(list.Items, ws.Spec.ProjectRef.Name); ro != nil {
			d.Rollout = ro.Name
		}
	}
	return d, nil
}

// noPolicyDecides records, as a fast run d starts, that no policy gates
// it: the PolicyPassed condition (its message naming the namespace's
// policies that select the Workspace but may not gate it, which an event
// also names), the verdict the run's plan is recorded with.
func (r *Reconciler) noPolicyDecides(ws *magosv1.Workspace, d *deciders) {
	r.reportIgnoredPolicies(ws, d.Ignored)
	conditions.Set(ws, magosv1.PolicyPassedCondition, metav1.ConditionTrue, magosv1.ReasonPolicyPassed,
		"No policy selects this Workspace: its plans are applied without a gate"+ignoredNote(d.Ignored))
}
