package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/conditions"
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

// reconcilePolicy is the policy gate: it evaluates the pending plan against
// the selected Kyverno ValidatingPolicies (again whenever a selected policy
// changes) and records the verdict in status.plan.policy and the
// PolicyPassed condition. It fails closed: a policy that cannot be read or
// evaluated blocks the plan. A verdict that passed or found violations is
// kept while the policies are unchanged; one that errored is evaluated
// again.
//
// Waivers are Kyverno PolicyExceptions in the Workspace's namespace bound
// to it and to the plan's digest (policy.ListWaivers), live at now: a
// denial they match does not block, and the verdict names them. The
// verdict is evaluated again when they change or the first one expires.
func (r *Reconciler) reconcilePolicy(ctx context.Context, ws *magosv1.Workspace, project *magosv1.Project, now time.Time) (decide.GateVerdict, error) {
	plan := ws.Status.Plan
	namespaced, err := r.namespacedPoliciesAllowed(ctx, ws.Namespace)
	if err != nil {
		return r.recordVerdict(ws, policyprotocol.Verdict{Errored: true, Message: fmt.Sprintf("selecting policies: %v", err)}, "", decide.GateErrored, magosv1.ReasonPolicyError), nil
	}
	selection, err := policy.Select(ctx, r.Client, policy.Scope{Namespace: ws.Namespace, Namespaced: namespaced},
		policySelectors(r.Options.Guards.ClusterPolicySelector, ws, project)...)
	if err != nil {
		return r.recordVerdict(ws, policyprotocol.Verdict{Errored: true, Message: fmt.Sprintf("selecting policies: %v", err)}, "", decide.GateErrored, magosv1.ReasonPolicyError), nil
	}
	waivers, err := policy.ListWaivers(ctx, r.Client, ws.Namespace, ws.Name, plan.Digest, now)
	if err != nil {
		return r.recordVerdict(ws, policyprotocol.Verdict{Errored: true, Message: fmt.Sprintf("reading PolicyExceptions: %v", err)}, "", decide.GateErrored, magosv1.ReasonPolicyError), nil
	}
	selected := policy.WithWaivers(selection.Policies, waivers.Live)
	refused := policy.RefusedWaivers(selection.Policies, waivers.Live)
	digest := policiesDigest(selected, refused)
	if v := plan.Policy; v != nil && v.PoliciesDigest == digest && (v.Passed || len(v.Violations) > 0) {
		if v.Passed {
			return decide.GateVerdict{Outcome: decide.GatePassed, Message: v.Message, Until: timeOf(v.WaiversExpire)}, nil
		}
		return decide.GateVerdict{Outcome: decide.GateBlocked, Reason: magosv1.ReasonPolicyViolation, Message: v.Message}, nil
	}
	// A verdict is recorded below: say which policies and waivers it
	// leaves out.
	r.reportIgnoredPolicies(ws, selection.Ignored)
	r.reportRefusedWaivers(ws, refused)
	if len(selected) == 0 {
		return r.recordVerdict(ws, policyprotocol.Verdict{Passed: true, Message: "No policy selects this Workspace" + ignoredNote(selection.Ignored)}, digest, decide.GatePassed, ""), nil
	}
	// Only plan.json, bounded: a plan Secret is written by the runner,
	// which runs the Workspace's code, so it may be a decompression bomb.
	// The rest of the stream is read, not unpacked, to check it is the
	// bundle recorded with the plan.
	stored, err := planstore.LoadJSONSealed(ctx, r.planGetter(ws.Namespace), ws.Name, r.Options.PlanJSONLimit(), plan.BundleDigest)
	switch {
	case errors.Is(err, planstore.ErrTooLarge):
		// The same plan never fits: it stalls until a new plan.
		return r.recordVerdict(ws, policyprotocol.Verdict{Errored: true, Message: fmt.Sprintf("the stored plan is too large to evaluate: %v", err)},
			digest, decide.GateBlocked, magosv1.ReasonPlanTooLarge), nil
	case errors.Is(err, planstore.ErrCorrupt):
		// Not the bundle recorded with the plan (rewritten since, or
		// recorded before bundle digests were): plan again.
		return r.recordVerdict(ws, policyprotocol.Verdict{Errored: true, Message: fmt.Sprintf("the stored plan is not the one recorded: %v; re-planning", err)},
			digest, decide.GateStalePlan, magosv1.ReasonPolicyError), nil
	case err != nil:
		return r.recordVerdict(ws, policyprotocol.Verdict{Errored: true, Message: fmt.Sprintf("reading the stored plan: %v", err)}, digest, decide.GateErrored, magosv1.ReasonPolicyError), nil
	case stored.ID != plan.ID || stored.Digest != plan.Digest:
		return r.recordVerdict(ws, policyprotocol.Verdict{Errored: true, Message: fmt.Sprintf("the stored plan is %s, not %s; re-planning", stored.ID, plan.ID)},
			digest, decide.GateStalePlan, magosv1.ReasonPolicyError), nil
	}
	v := r.Policies.Evaluate(ctx, ws.Namespace, selected, stored.JSON)
	note := ignoredNote(selection.Ignored) + ignoredWaiversNote(append(slices.Clone(waivers.Ignored), refusedWhy(refused)...))
	switch {
	case v.Passed && waived(v):
		expires := metav1.NewTime(waivers.Expires())
		g := r.recordNotedVerdict(ws, v, note, digest, decide.GatePassed, "")
		plan.Policy.WaiversExpire, g.Until = &expires, &expires.Time
		r.event(ws, corev1.EventTypeNormal, magosv1.ReasonPolicyWaived, "%s %s: %s; waivers: %s", decide.PlanNoun(plan), plan.ID, g.Message, describeWaivers(waivers.Live))
		return g, nil
	case v.Passed:
		return r.recordNotedVerdict(ws, v, note, digest, decide.GatePassed, ""), nil
	case v.Errored:
		return r.recordNotedVerdict(ws, v, note, digest, decide.GateErrored, magosv1.ReasonPolicyError), nil
	}
	return r.recordNotedVerdict(ws, v, note, digest, decide.GateBlocked, magosv1.ReasonPolicyViolation), nil
}

// describeWaivers says who created each waiver, why and until when.
func describeWaivers(live []policy.Exception) string {
	parts := make([]string, 0, len(live))
	for _, e := range live {
		parts = append(parts, e.Describe())
	}
	return policyprotocol.Truncate(strings.Join(parts, "; "), policyprotocol.MessageLimit)
}

// waived reports whether a waiver lifted a denial of verdict v.
func waived(v policyprotocol.Verdict) bool {
	for _, viol := range v.Violations {
		if viol.Waived() {
			return true
		}
	}
	return false
}

// ignoredWaiversNote is the part of a verdict's message that names the
// PolicyExceptions bound to the plan that cannot waive.
func ignoredWaiversNote(ignored []string) string {
	if len(ignored) == 0 {
		return ""
	}
	return fmt.Sprintf(" (PolicyExceptions not applied: %s)", strings.Join(ignored, "; "))
}

// timeOf is t's time, or nil.
func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	return &t.Time
}

// reportRefusedWaivers emits a Warning event naming the waivers that name
// a policy they may not lift.
func (r *Reconciler) reportRefusedWaivers(ws *magosv1.Workspace, refused []policy.RefusedWaiver) {
	if len(refused) == 0 {
		return
	}
	r.event(ws, corev1.EventTypeWarning, magosv1.ReasonWaiverNotAllowed,
		"PolicyExceptions not applied: %s; a waiver lifts a cluster ValidatingPolicy only where the policy carries the annotation %s: \"true\"",
		policyprotocol.Truncate(strings.Join(refusedWhy(refused), "; "), policyprotocol.MessageLimit), magosv1.WaivableAnnotation)
}

// refusedWhy says of each refused waiver which policy it may not lift.
func refusedWhy(refused []policy.RefusedWaiver) []string {
	out := make([]string, 0, len(refused))
	for _, w := range refused {
		out = append(out, w.Why)
	}
	return out
}

// reportIgnoredPolicies emits a Warning event naming the
// NamespacedValidatingPolicies that select ws but may not gate it.
func (r *Reconciler) reportIgnoredPolicies(ws *magosv1.Workspace, ignored []string) {
	if len(ignored) == 0 {
		return
	}
	r.event(ws, corev1.EventTypeWarning, magosv1.ReasonNamespacedPolicyIgnored,
		"NamespacedValidatingPolicies %s ignored: namespace %s is not allowed namespaced policies (--namespaced-policies-namespace-selector); only cluster ValidatingPolicies gate its plans",
		strings.Join(ignored, ", "), ws.Namespace)
}

// ignoredNote is the part of a verdict's message that names the ignored
// NamespacedValidatingPolicies.
func ignoredNote(ignored []string) string {
	if len(ignored) == 0 {
		return ""
	}
	return fmt.Sprintf(" (ignored NamespacedValidatingPolicies %s: this namespace is not allowed namespaced policies)", strings.Join(ignored, ", "))
}

// planGetter reads plan Secrets uncached, so the controller caches no Secret.
func (r *Reconciler) planGetter(namespace string) planstore.Getter {
	return planstore.GetterFunc(func(ctx context.Context, name string) (*corev1.Secret, error) {
		s := &corev1.Secret{}
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s)
		return s, err
	})
}

// recordVerdict stores verdict v in status and the PolicyPassed condition
// (reason, PolicyPassed when it passed), emits an event for a plan it
// blocks, counts a plan with violations as a run failure (PolicyDenied)
// once, however often changed policies re-evaluate it, and returns it as
// the gate's outcome.
func (r *Reconciler) recordVerdict(ws *magosv1.Workspace, v policyprotocol.Verdict, digest string, outcome decide.GateOutcome, reason string) decide.GateVerdict {
	return r.recordNotedVerdict(ws, v, "", digest, outcome, reason)
}

// recordNotedVerdict is recordVerdict with note (what the gate left out)
// at the end of the verdict's message.
func (r *Reconciler) recordNotedVerdict(ws *magosv1.Workspace, v policyprotocol.Verdict, note, digest string, outcome decide.GateOutcome, reason string) decide.GateVerdict {
	plan := ws.Status.Plan
	deniedBefore := plan.Policy != nil && len(plan.Policy.Violations) > 0 && !plan.Policy.Passed
	const limit = 1024
	msg := policyprotocol.Truncate(policyprotocol.StatusMessage(v, limit-min(len(note), limit/2))+note, limit)
	plan.Policy = policy.APIVerdict(v, digest)
	plan.Policy.Message = msg
	if outcome == decide.GatePassed {
		conditions.Set(ws, magosv1.PolicyPassedCondition, metav1.ConditionTrue, magosv1.ReasonPolicyPassed, msg)
		return decide.GateVerdict{Outcome: decide.GatePassed, Message: msg}
	}
	conditions.Set(ws, magosv1.PolicyPassedCondition, metav1.ConditionFalse, reason, msg)
	r.event(ws, corev1.EventTypeWarning, reason, "%s blocked: %s", decide.PlanNoun(plan), msg)
	if reason == magosv1.ReasonPolicyViolation && !deniedBefore {
		r.later(func() { metrics.RecordRunFailure(magosv1.RunPlan, magosv1.ReasonPolicyDenied) })
	}
	return decide.GateVerdict{Outcome: outcome, Reason: reason, Message: msg}
}
