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
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
)

// decidersOf looks up what would decide on ws's next plan besides its
// spec: the policies that select it, as the gate would select them, and
// the Rollout governing its Project.
func (r *Reconciler) decidersOf(ctx context.Context, ws *magosv1.Workspace, project *magosv1.Project) (*decide.Deciders, error) {
	d := &decide.Deciders{}
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
func (r *Reconciler) noPolicyDecides(ws *magosv1.Workspace, d *decide.Deciders) {
	r.reportIgnoredPolicies(ws, d.Ignored)
	conditions.Set(ws, magosv1.PolicyPassedCondition, metav1.ConditionTrue, magosv1.ReasonPolicyPassed,
		"No policy selects this Workspace: its plans are applied without a gate"+ignoredNote(d.Ignored))
}
