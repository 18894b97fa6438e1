package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
)

// PolicyEvaluator evaluates plan JSON against the selected policies, as
// *policy.EngineClient does in the policy engine process.
type PolicyEvaluator interface {
	Evaluate(ctx context.Context, namespace string, policies []policy.Policy, planJSON []byte) policyprotocol.Verdict
}

// policySelectors are the label selectors of the policies a Workspace's
// plans must pass: the cluster's (if the operator set one), its own and its
// Project's.
func policySelectors(cluster *metav1.LabelSelector, ws *magosv1.Workspace, project *magosv1.Project) []*metav1.LabelSelector {
	var sels []*metav1.LabelSelector
	if cluster != nil {
		sels = append(sels, cluster)
	}
	if ws.Spec.Policy != nil && ws.Spec.Policy.Selector != nil {
		sels = append(sels, ws.Spec.Policy.Selector)
	}
	if project != nil && project.Status.PolicySelector != nil {
		sels = append(sels, project.Status.PolicySelector)
	}
	return sels
}

// policiesDigest identifies a set of policy versions and the waivers
// bound to each, and the waivers refused (so that a verdict names a
// refused waiver once it exists). A policy's annotations are not in its
// generation: whether it allows waivers is read from the waivers each
// carries.
func policiesDigest(ps []policy.Policy, refused []policy.RefusedWaiver) string {
	ids := make([]string, 0, len(ps))
	for _, p := range ps {
		u := p.Object
		ids = append(ids, fmt.Sprintf("%s/%s/%s/%d", p.Kind(), u.GetNamespace(), u.GetName(), u.GetGeneration())+"/"+string(u.GetUID()))
		for _, e := range p.Exceptions {
			ids = append(ids, fmt.Sprintf("%s/%s/%s/%s/%d/%s", p.Kind(), u.GetName(), policy.KindPolicyException, e.Name(), e.Object.Generation, e.Object.UID))
		}
	}
	for _, w := range refused {
		ids = append(ids, fmt.Sprintf("refused/%s/%d/%s: %s", policy.KindPolicyException, w.Exception.Object.Generation, w.Exception.Object.UID, w.Why))
	}
	sort.Strings(ids)
	h := sha256.New()
	for _, id := range ids {
		h.Write([]byte(id))
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// reconcilePolicy is the policy gate: it reads what the gate decides on
// (gatePolicyFacts) and folds the verdict into status (decide.FoldGate).
// A verdict that passed or found violations is kept while the policies
// and waivers are unchanged (decide.ReusedVerdict); one that errored is
// evaluated again.
func (r *Reconciler) reconcilePolicy(ctx context.Context, ws *magosv1.Workspace, project *magosv1.Project, now time.Time) (decide.GateVerdict, error) {
	g, reused, ok := r.gatePolicyFacts(ctx, ws, project, now)
	if ok {
		return reused, nil
	}
	fold := decide.FoldGate(ws, g)
	r.notes(ws, fold.Notes)
	if fold.CountDenied {
		r.later(func() { metrics.RecordRunFailure(magosv1.RunPlan, magosv1.ReasonPolicyDenied) })
	}
	return fold.Verdict, nil
}

// gatePolicyFacts reads what the gate decides on for ws's pending plan:
// the Kyverno ValidatingPolicies selected (cluster, Workspace and
// Project selectors; the namespace's own only where it may have them),
// the waivers bound to the Workspace and the plan's digest and live at
// now (policy.ListWaivers), the stored plan.json (bounded, and checked to
// be the bundle recorded with the plan), and the engine's verdict on it.
// It returns the recorded verdict instead (ok) when it still holds.
func (r *Reconciler) gatePolicyFacts(ctx context.Context, ws *magosv1.Workspace, project *magosv1.Project, now time.Time) (g decide.GateFacts, reused decide.GateVerdict, ok bool) {
	plan := ws.Status.Plan
	g.Namespace = ws.Namespace
	selection, err := r.selectPolicies(ctx, ws, project)
	if err != nil {
		g.Failure, g.Detail = decide.GateSelectionFailed, err.Error()
		return g, reused, false
	}
	waivers, err := policy.ListWaivers(ctx, r.Client, ws.Namespace, ws.Name, plan.Digest, now)
	if err != nil {
		g.Failure, g.Detail = decide.GateWaiversUnreadable, err.Error()
		return g, reused, false
	}
	selected := policy.WithWaivers(selection.Policies, waivers.Live)
	refused := policy.RefusedWaivers(selection.Policies, waivers.Live)
	g.Digest = policiesDigest(selected, refused)
	if reused, ok := decide.ReusedVerdict(plan, g.Digest); ok {
		return g, reused, true
	}
	g.Policies, g.Ignored, g.Refused, g.IgnoredWaivers = len(selected), selection.Ignored, refusedWhy(refused), waivers.Ignored
	g.Waivers, g.WaiversExpire = describeWaivers(waivers.Live), waivers.Expires()
	if !g.NeedsEngine() {
		return g, reused, false
	}
	// Only plan.json, bounded: a plan Secret is written by the runner,
	// which runs the Workspace's code, so it may be a decompression bomb.
	// The rest of the stream is read, not unpacked, to check it is the
	// bundle recorded with the plan.
	stored, err := planstore.LoadJSONSealed(ctx, r.planGetter(ws.Namespace), ws.Name, r.Options.PlanJSONLimit(), plan.BundleDigest)
	switch {
	case errors.Is(err, planstore.ErrTooLarge):
		g.Failure, g.Detail = decide.GatePlanTooLarge, err.Error()
	case errors.Is(err, planstore.ErrCorrupt):
		g.Failure, g.Detail = decide.GatePlanNotRecorded, err.Error()
	case err != nil:
		g.Failure, g.Detail = decide.GatePlanUnreadable, err.Error()
	case stored.ID != plan.ID || stored.Digest != plan.Digest:
		g.Failure, g.StoredPlan = decide.GatePlanReplaced, stored.ID
	default:
		g.Engine = r.Policies.Evaluate(ctx, ws.Namespace, selected, stored.JSON)
	}
	return g, reused, false
}

// policySelection is the policies that select a Workspace, or why they
// could not be selected.
type policySelection struct {
	policy.Selection
	err error
}

// selectPolicies selects the policies ws's plans must pass: the cluster
// ValidatingPolicies its selectors pick and, where its namespace may have
// them, its NamespacedValidatingPolicies. It reads them once per
// reconcile: the fast path's deciders and the gate ask the same question.
func (r *Reconciler) selectPolicies(ctx context.Context, ws *magosv1.Workspace, project *magosv1.Project) (policy.Selection, error) {
	if r.reports != nil && r.reports.policies != nil {
		return r.reports.policies.Selection, r.reports.policies.err
	}
	namespaced, err := r.namespacedPoliciesAllowed(ctx, ws.Namespace)
	var selection policy.Selection
	if err == nil {
		selection, err = policy.Select(ctx, r.Client, policy.Scope{Namespace: ws.Namespace, Namespaced: namespaced},
			policySelectors(r.Options.Guards.ClusterPolicySelector, ws, project)...)
	}
	if r.reports != nil {
		r.reports.policies = &policySelection{Selection: selection, err: err}
	}
	return selection, err
}

// describeWaivers says who created each waiver, why and until when.
func describeWaivers(live []policy.Exception) string {
	parts := make([]string, 0, len(live))
	for _, e := range live {
		parts = append(parts, e.Describe())
	}
	return policyprotocol.Truncate(strings.Join(parts, "; "), policyprotocol.MessageLimit)
}

// refusedWhy says of each refused waiver which policy it may not lift.
func refusedWhy(refused []policy.RefusedWaiver) []string {
	out := make([]string, 0, len(refused))
	for _, w := range refused {
		out = append(out, w.Why)
	}
	return out
}

// planGetter reads plan Secrets uncached, so the controller caches no Secret.
func (r *Reconciler) planGetter(namespace string) planstore.Getter {
	return planstore.GetterFunc(func(ctx context.Context, name string) (*corev1.Secret, error) {
		s := &corev1.Secret{}
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s)
		return s, err
	})
}
