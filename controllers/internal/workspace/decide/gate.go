package decide

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// GateFacts are what the policy gate read for a pending plan (the
// reconciler's reconcilePolicy): the policies selected with their
// waivers, the stored plan, and the engine's verdict on it. FoldGate reads
// nothing else.
type GateFacts struct {
	// Failure is what could not be read; Detail its error. Zero when
	// everything was read.
	Failure GateFailure
	Detail  string
	// Digest identifies the selected policies with their waivers and the
	// refused waivers; empty when they could not be read.
	Digest string
	// Policies is how many policies select the plan.
	Policies int
	// Namespace is the Workspace's, which Ignored policies may not gate.
	Namespace string
	// Ignored names the NamespacedValidatingPolicies that select the
	// Workspace but may not gate it.
	Ignored []string
	// Refused says of each waiver why it may not lift its policy;
	// IgnoredWaivers names those bound to the plan that cannot waive.
	Refused, IgnoredWaivers []string
	// Waivers describes the live waivers; WaiversExpire is when the first
	// expires.
	Waivers       string
	WaiversExpire time.Time
	// Engine is the engine's verdict on the stored plan, when it was
	// evaluated (NeedsEngine).
	Engine policyprotocol.Verdict
	// StoredPlan is the ID of the plan stored in its Secret, when it is
	// another plan (GatePlanReplaced).
	StoredPlan string
}

// GateFailure is what the gate could not read.
type GateFailure int

const (
	gateRead GateFailure = iota
	// GateSelectionFailed: the policies could not be selected.
	GateSelectionFailed
	// GateWaiversUnreadable: the PolicyExceptions could not be read.
	GateWaiversUnreadable
	// GatePlanUnreadable: the stored plan could not be read.
	GatePlanUnreadable
	// GatePlanTooLarge: the stored plan exceeds what the gate evaluates;
	// the same plan never fits.
	GatePlanTooLarge
	// GatePlanNotRecorded: the stored bundle is not the one recorded with
	// the plan (rewritten since, or recorded before bundle digests were).
	GatePlanNotRecorded
	// GatePlanReplaced: the stored plan is another plan than status names.
	GatePlanReplaced
)

// verdictMessageLimit bounds status.plan.policy.message and the
// PolicyPassed condition's message.
const verdictMessageLimit = 1024

// ReusedVerdict is the verdict recorded on plan, when it still holds: it
// was evaluated against the same policies and waivers (digest), and passed
// or found violations (an errored one is evaluated again).
func ReusedVerdict(plan *magosv1.PlanStatus, digest string) (GateVerdict, bool) {
	v := plan.Policy
	if v == nil || v.PoliciesDigest != digest || (!v.Passed && len(v.Violations) == 0) {
		return GateVerdict{}, false
	}
	if v.Passed {
		var until *time.Time
		if v.WaiversExpire != nil {
			until = &v.WaiversExpire.Time
		}
		return GateVerdict{Outcome: GatePassed, Message: v.Message, Until: until}, true
	}
	return GateVerdict{Outcome: GateBlocked, Reason: magosv1.ReasonPolicyViolation, Message: v.Message}, true
}

// NeedsEngine reports whether the engine must evaluate the stored plan:
// everything was read and some policy selects the plan.
func (g GateFacts) NeedsEngine() bool { return g.Failure == gateRead && g.Policies > 0 }

// GateFold is what folding a verdict did besides the status: the events
// to record and whether the plan counts as a run failure (PolicyDenied),
// once, however often changed policies evaluate it again.
type GateFold struct {
	Verdict     GateVerdict
	Notes       []Note
	CountDenied bool
}

// FoldGate records the gate's verdict on ws's pending plan from what it
// read: status.plan.policy and the PolicyPassed condition, with a Warning
// for the policies and waivers it left out and for a plan it blocks, and a
// Normal event for one a waiver let through. It fails closed: a policy or
// plan that could not be read or evaluated blocks the plan.
func FoldGate(ws *magosv1.Workspace, g GateFacts) GateFold {
	var out GateFold
	var v policyprotocol.Verdict
	outcome, reason := GateErrored, magosv1.ReasonPolicyError
	switch g.Failure {
	case GateSelectionFailed:
		v = policyprotocol.Verdict{Errored: true, Message: "selecting policies: " + g.Detail}
		return foldVerdict(ws, v, "", "", outcome, reason, out)
	case GateWaiversUnreadable:
		v = policyprotocol.Verdict{Errored: true, Message: "reading PolicyExceptions: " + g.Detail}
		return foldVerdict(ws, v, "", "", outcome, reason, out)
	}
	// The policies and waivers were read: say which the verdict leaves out.
	if len(g.Ignored) > 0 {
		out.Notes = append(out.Notes, ignoredPoliciesWarning(g.Namespace, g.Ignored))
	}
	if len(g.Refused) > 0 {
		out.Notes = append(out.Notes, Note{Warning, magosv1.ReasonWaiverNotAllowed, fmt.Sprintf(
			"PolicyExceptions not applied: %s; a waiver lifts a cluster ValidatingPolicy only where the policy carries the annotation %s: \"true\"",
			policyprotocol.Truncate(strings.Join(g.Refused, "; "), policyprotocol.MessageLimit), magosv1.WaivableAnnotation)})
	}
	note := ""
	switch g.Failure {
	case GatePlanTooLarge:
		v, outcome, reason = policyprotocol.Verdict{Errored: true, Message: "the stored plan is too large to evaluate: " + g.Detail}, GateBlocked, magosv1.ReasonPlanTooLarge
	case GatePlanNotRecorded:
		v, outcome = policyprotocol.Verdict{Errored: true, Message: "the stored plan is not the one recorded: " + g.Detail + "; re-planning"}, GateStalePlan
	case GatePlanUnreadable:
		v = policyprotocol.Verdict{Errored: true, Message: "reading the stored plan: " + g.Detail}
	case GatePlanReplaced:
		v, outcome = policyprotocol.Verdict{Errored: true, Message: fmt.Sprintf("the stored plan is %s, not %s; re-planning", g.StoredPlan, ws.Status.Plan.ID)}, GateStalePlan
	default:
		if g.Policies == 0 {
			v, outcome, reason = policyprotocol.Verdict{Passed: true, Message: "No policy selects this Workspace" + IgnoredPoliciesNote(g.Ignored)}, GatePassed, ""
			break
		}
		v = g.Engine
		note = IgnoredPoliciesNote(g.Ignored) + ignoredWaiversNote(append(append([]string(nil), g.IgnoredWaivers...), g.Refused...))
		switch {
		case v.Passed:
			outcome, reason = GatePassed, ""
		case v.Errored:
		default:
			outcome, reason = GateBlocked, magosv1.ReasonPolicyViolation
		}
	}
	out = foldVerdict(ws, v, note, g.Digest, outcome, reason, out)
	if outcome == GatePassed && waived(v) {
		expires := metav1.NewTime(g.WaiversExpire)
		plan := ws.Status.Plan
		plan.Policy.WaiversExpire, out.Verdict.Until = &expires, &expires.Time
		out.Notes = append(out.Notes, Note{Normal, magosv1.ReasonPolicyWaived,
			fmt.Sprintf("%s %s: %s; waivers: %s", PlanNoun(plan), plan.ID, out.Verdict.Message, g.Waivers)})
	}
	return out
}

// foldVerdict stores verdict v (note, what the gate left out, at the end
// of its message) in status.plan.policy and the PolicyPassed condition
// (reason, PolicyPassed when it passed), with a Warning for a plan it
// blocks.
func foldVerdict(ws *magosv1.Workspace, v policyprotocol.Verdict, note, digest string, outcome GateOutcome, reason string, out GateFold) GateFold {
	plan := ws.Status.Plan
	deniedBefore := plan.Policy != nil && len(plan.Policy.Violations) > 0 && !plan.Policy.Passed
	msg := policyprotocol.Truncate(policyprotocol.StatusMessage(v, verdictMessageLimit-min(len(note), verdictMessageLimit/2))+note, verdictMessageLimit)
	plan.Policy = APIVerdict(v, digest)
	plan.Policy.Message = msg
	if outcome == GatePassed {
		conditions.Set(ws, magosv1.PolicyPassedCondition, metav1.ConditionTrue, magosv1.ReasonPolicyPassed, msg)
		out.Verdict = GateVerdict{Outcome: GatePassed, Message: msg}
		return out
	}
	conditions.Set(ws, magosv1.PolicyPassedCondition, metav1.ConditionFalse, reason, msg)
	out.Notes = append(out.Notes, Note{Warning, reason, fmt.Sprintf("%s blocked: %s", PlanNoun(plan), msg)})
	out.CountDenied = reason == magosv1.ReasonPolicyViolation && !deniedBefore
	out.Verdict = GateVerdict{Outcome: outcome, Reason: reason, Message: msg}
	return out
}

// FoldUngated records, as a fast run starts, that no policy gates it: the
// PolicyPassed condition (its message naming the namespace's policies that
// select the Workspace but may not gate it), with a Warning naming them.
func FoldUngated(ws *magosv1.Workspace, namespace string, ignored []string) []Note {
	var notes []Note
	if len(ignored) > 0 {
		notes = append(notes, ignoredPoliciesWarning(namespace, ignored))
	}
	conditions.Set(ws, magosv1.PolicyPassedCondition, metav1.ConditionTrue, magosv1.ReasonPolicyPassed,
		"No policy selects this Workspace: its plans are applied without a gate"+IgnoredPoliciesNote(ignored))
	return notes
}

// APIVerdict renders a verdict as Workspace status.plan.policy, with the
// digest of the policies it was evaluated against.
func APIVerdict(v policyprotocol.Verdict, policiesDigest string) *magosv1.PolicyVerdict {
	out := &magosv1.PolicyVerdict{
		Passed:         v.Passed,
		Policies:       v.Policies,
		Message:        v.Message,
		PoliciesDigest: policiesDigest,
	}
	for _, viol := range v.Violations {
		out.Violations = append(out.Violations, magosv1.PolicyViolation{
			Policy:     viol.Policy,
			Validation: int32(viol.Validation),
			Message:    viol.Message,
			Action:     viol.Action,
			WaivedBy:   viol.WaivedBy,
		})
	}
	return out
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

// ignoredPoliciesWarning names the NamespacedValidatingPolicies that
// select a Workspace of namespace but may not gate it.
func ignoredPoliciesWarning(namespace string, ignored []string) Note {
	return Note{Warning, magosv1.ReasonNamespacedPolicyIgnored, fmt.Sprintf(
		"NamespacedValidatingPolicies %s ignored: namespace %s is not allowed namespaced policies (--namespaced-policies-namespace-selector); only cluster ValidatingPolicies gate its plans",
		strings.Join(ignored, ", "), namespace)}
}

// IgnoredPoliciesNote is the part of a verdict's message that names the
// ignored NamespacedValidatingPolicies.
func IgnoredPoliciesNote(ignored []string) string {
	if len(ignored) == 0 {
		return ""
	}
	return fmt.Sprintf(" (ignored NamespacedValidatingPolicies %s: this namespace is not allowed namespaced policies)", strings.Join(ignored, ", "))
}

// ignoredWaiversNote is the part of a verdict's message that names the
// PolicyExceptions bound to the plan that cannot waive.
func ignoredWaiversNote(ignored []string) string {
	if len(ignored) == 0 {
		return ""
	}
	return fmt.Sprintf(" (PolicyExceptions not applied: %s)", strings.Join(ignored, "; "))
}
