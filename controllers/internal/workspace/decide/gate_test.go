package decide

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/policyprotocol"
)

// gateWorkspace is a Workspace whose plan p1 waits for the gate, with
// verdict (nil: none yet).
func gateWorkspace(verdict *magosv1.PolicyVerdict) *magosv1.Workspace {
	ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "team", Generation: 3}}
	ws.Status.Plan = &magosv1.PlanStatus{ID: "p1", Digest: "sha256:plan", Revision: "main@sha1:abc", HasChanges: true, Policy: verdict}
	ws.Status.Phase = magosv1.PhaseAwaitingApproval
	return ws
}

// TestFoldGate pins every byte FoldGate writes, for every way the gate
// can end: status.plan.policy, the PolicyPassed condition, the events, the
// verdict the decision reads and whether the plan counts as denied; the
// rest of the status is left as it was.
func TestFoldGate(t *testing.T) {
	expires := time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	deny := policyprotocol.Violation{Policy: "no-public-buckets", Validation: 0, Message: "bucket is public", Action: policyprotocol.ActionDeny}
	denied := policyprotocol.Verdict{Policies: []string{"no-public-buckets", "tags"}, Violations: []policyprotocol.Violation{deny}}
	waivedDeny := deny
	waivedDeny.WaivedBy = []string{"team/launch"}
	const deniedMsg = "Plan denied by 1 of 2 policies: no-public-buckets [Deny]: bucket is public"
	const ignoredNote = " (ignored NamespacedValidatingPolicies team-only: this namespace is not allowed namespaced policies)"
	ignoredEvent := Note{Warning, magosv1.ReasonNamespacedPolicyIgnored, "NamespacedValidatingPolicies team-only ignored: namespace team is not allowed namespaced policies (--namespaced-policies-namespace-selector); only cluster ValidatingPolicies gate its plans"}
	long := strings.Repeat("x", 2000)

	for _, tt := range []struct {
		name   string
		before *magosv1.PolicyVerdict
		facts  GateFacts
		policy *magosv1.PolicyVerdict
		cond   metav1.Condition
		fold   GateFold
	}{{
		name:   "policies cannot be selected: errored, evaluated again",
		facts:  GateFacts{Failure: GateSelectionFailed, Detail: "listing ValidatingPolicies: timeout", Namespace: "team", Ignored: []string{"unread"}},
		policy: &magosv1.PolicyVerdict{Message: "selecting policies: listing ValidatingPolicies: timeout"},
		cond:   metav1.Condition{Status: metav1.ConditionFalse, Reason: magosv1.ReasonPolicyError, Message: "selecting policies: listing ValidatingPolicies: timeout"},
		fold: GateFold{
			Verdict: GateVerdict{Outcome: GateErrored, Reason: magosv1.ReasonPolicyError, Message: "selecting policies: listing ValidatingPolicies: timeout"},
			Notes:   []Note{{Warning, magosv1.ReasonPolicyError, "Plan blocked: selecting policies: listing ValidatingPolicies: timeout"}},
		},
	}, {
		name:   "waivers cannot be read: errored",
		facts:  GateFacts{Failure: GateWaiversUnreadable, Detail: "forbidden"},
		policy: &magosv1.PolicyVerdict{Message: "reading PolicyExceptions: forbidden"},
		cond:   metav1.Condition{Status: metav1.ConditionFalse, Reason: magosv1.ReasonPolicyError, Message: "reading PolicyExceptions: forbidden"},
		fold: GateFold{
			Verdict: GateVerdict{Outcome: GateErrored, Reason: magosv1.ReasonPolicyError, Message: "reading PolicyExceptions: forbidden"},
			Notes:   []Note{{Warning, magosv1.ReasonPolicyError, "Plan blocked: reading PolicyExceptions: forbidden"}},
		},
	}, {
		name:   "no policy selects the Workspace: passed, naming the ignored ones",
		facts:  GateFacts{Digest: "sha256:none", Namespace: "team", Ignored: []string{"team-only"}},
		policy: &magosv1.PolicyVerdict{Passed: true, Message: "No policy selects this Workspace" + ignoredNote, PoliciesDigest: "sha256:none"},
		cond:   metav1.Condition{Status: metav1.ConditionTrue, Reason: magosv1.ReasonPolicyPassed, Message: "No policy selects this Workspace" + ignoredNote},
		fold: GateFold{
			Verdict: GateVerdict{Outcome: GatePassed, Message: "No policy selects this Workspace" + ignoredNote},
			Notes:   []Note{ignoredEvent},
		},
	}, {
		name:   "the engine passes the plan",
		facts:  GateFacts{Digest: "sha256:two", Policies: 2, Engine: policyprotocol.Verdict{Passed: true, Policies: []string{"no-public-buckets", "tags"}}},
		policy: &magosv1.PolicyVerdict{Passed: true, Policies: []string{"no-public-buckets", "tags"}, Message: "Plan passed 2 policies", PoliciesDigest: "sha256:two"},
		cond:   metav1.Condition{Status: metav1.ConditionTrue, Reason: magosv1.ReasonPolicyPassed, Message: "Plan passed 2 policies"},
		fold:   GateFold{Verdict: GateVerdict{Outcome: GatePassed, Message: "Plan passed 2 policies"}},
	}, {
		name:   "the engine denies the plan: blocked, counted once",
		facts:  GateFacts{Digest: "sha256:two", Policies: 2, Engine: denied},
		policy: &magosv1.PolicyVerdict{Policies: denied.Policies, Violations: []magosv1.PolicyViolation{{Policy: "no-public-buckets", Message: "bucket is public", Action: "Deny"}}, Message: deniedMsg, PoliciesDigest: "sha256:two"},
		cond:   metav1.Condition{Status: metav1.ConditionFalse, Reason: magosv1.ReasonPolicyViolation, Message: deniedMsg},
		fold: GateFold{
			Verdict:     GateVerdict{Outcome: GateBlocked, Reason: magosv1.ReasonPolicyViolation, Message: deniedMsg},
			Notes:       []Note{{Warning, magosv1.ReasonPolicyViolation, "Plan blocked: " + deniedMsg}},
			CountDenied: true,
		},
	}, {
		name:   "denied again after the policies changed: not counted twice",
		before: &magosv1.PolicyVerdict{Violations: []magosv1.PolicyViolation{{Policy: "old"}}, PoliciesDigest: "sha256:old"},
		facts:  GateFacts{Digest: "sha256:two", Policies: 2, Engine: denied},
		policy: &magosv1.PolicyVerdict{Policies: denied.Policies, Violations: []magosv1.PolicyViolation{{Policy: "no-public-buckets", Message: "bucket is public", Action: "Deny"}}, Message: deniedMsg, PoliciesDigest: "sha256:two"},
		cond:   metav1.Condition{Status: metav1.ConditionFalse, Reason: magosv1.ReasonPolicyViolation, Message: deniedMsg},
		fold: GateFold{
			Verdict: GateVerdict{Outcome: GateBlocked, Reason: magosv1.ReasonPolicyViolation, Message: deniedMsg},
			Notes:   []Note{{Warning, magosv1.ReasonPolicyViolation, "Plan blocked: " + deniedMsg}},
		},
	}, {
		name: "a waiver lifts the denial: passed until it expires, with the waivers named",
		facts: GateFacts{Digest: "sha256:waived", Policies: 2, Waivers: "team/launch by alice until 2026-12-08T09:00:00Z: launch day", WaiversExpire: expires,
			Engine: policyprotocol.Verdict{Passed: true, Policies: denied.Policies, Violations: []policyprotocol.Violation{waivedDeny}}},
		policy: &magosv1.PolicyVerdict{Passed: true, Policies: denied.Policies, PoliciesDigest: "sha256:waived",
			Violations:    []magosv1.PolicyViolation{{Policy: "no-public-buckets", Message: "bucket is public", Action: "Deny", WaivedBy: []string{"team/launch"}}},
			Message:       "Plan passed 2 policies with 1 denial waived: no-public-buckets [Deny, waived by team/launch]: bucket is public",
			WaiversExpire: &metav1.Time{Time: expires}},
		cond: metav1.Condition{Status: metav1.ConditionTrue, Reason: magosv1.ReasonPolicyPassed, Message: "Plan passed 2 policies with 1 denial waived: no-public-buckets [Deny, waived by team/launch]: bucket is public"},
		fold: GateFold{
			Verdict: GateVerdict{Outcome: GatePassed, Message: "Plan passed 2 policies with 1 denial waived: no-public-buckets [Deny, waived by team/launch]: bucket is public", Until: &expires},
			Notes: []Note{{Normal, magosv1.ReasonPolicyWaived,
				"Plan p1: Plan passed 2 policies with 1 denial waived: no-public-buckets [Deny, waived by team/launch]: bucket is public; waivers: team/launch by alice until 2026-12-08T09:00:00Z: launch day"}},
		},
	}, {
		name: "waivers refused and not applied, policies ignored: events, and the message names them",
		facts: GateFacts{Digest: "sha256:two", Policies: 2, Namespace: "team", Ignored: []string{"team-only"},
			Refused: []string{"team/w1 may not lift cluster policy tags"}, IgnoredWaivers: []string{"team/w2 has expired"}, Engine: denied},
		policy: &magosv1.PolicyVerdict{Policies: denied.Policies, Violations: []magosv1.PolicyViolation{{Policy: "no-public-buckets", Message: "bucket is public", Action: "Deny"}},
			Message:        deniedMsg + ignoredNote + " (PolicyExceptions not applied: team/w2 has expired; team/w1 may not lift cluster policy tags)",
			PoliciesDigest: "sha256:two"},
		cond: metav1.Condition{Status: metav1.ConditionFalse, Reason: magosv1.ReasonPolicyViolation,
			Message: deniedMsg + ignoredNote + " (PolicyExceptions not applied: team/w2 has expired; team/w1 may not lift cluster policy tags)"},
		fold: GateFold{
			Verdict: GateVerdict{Outcome: GateBlocked, Reason: magosv1.ReasonPolicyViolation,
				Message: deniedMsg + ignoredNote + " (PolicyExceptions not applied: team/w2 has expired; team/w1 may not lift cluster policy tags)"},
			Notes: []Note{
				ignoredEvent,
				{Warning, magosv1.ReasonWaiverNotAllowed, `PolicyExceptions not applied: team/w1 may not lift cluster policy tags; a waiver lifts a cluster ValidatingPolicy only where the policy carries the annotation magos.dev/waivable: "true"`},
				{Warning, magosv1.ReasonPolicyViolation, "Plan blocked: " + deniedMsg + ignoredNote + " (PolicyExceptions not applied: team/w2 has expired; team/w1 may not lift cluster policy tags)"},
			},
			CountDenied: true,
		},
	}, {
		name:   "the engine errs: errored, evaluated again",
		facts:  GateFacts{Digest: "sha256:two", Policies: 2, Engine: policyprotocol.Verdict{Errored: true, Policies: denied.Policies, Message: "policy engine unavailable"}},
		policy: &magosv1.PolicyVerdict{Policies: denied.Policies, Message: "policy engine unavailable", PoliciesDigest: "sha256:two"},
		cond:   metav1.Condition{Status: metav1.ConditionFalse, Reason: magosv1.ReasonPolicyError, Message: "policy engine unavailable"},
		fold: GateFold{
			Verdict: GateVerdict{Outcome: GateErrored, Reason: magosv1.ReasonPolicyError, Message: "policy engine unavailable"},
			Notes:   []Note{{Warning, magosv1.ReasonPolicyError, "Plan blocked: policy engine unavailable"}},
		},
	}, {
		name:   "the stored plan is too large: blocked until a new plan",
		facts:  GateFacts{Failure: GatePlanTooLarge, Detail: "plan.json exceeds 256 MiB", Digest: "sha256:two", Policies: 2},
		policy: &magosv1.PolicyVerdict{Message: "the stored plan is too large to evaluate: plan.json exceeds 256 MiB", PoliciesDigest: "sha256:two"},
		cond:   metav1.Condition{Status: metav1.ConditionFalse, Reason: magosv1.ReasonPlanTooLarge, Message: "the stored plan is too large to evaluate: plan.json exceeds 256 MiB"},
		fold: GateFold{
			Verdict: GateVerdict{Outcome: GateBlocked, Reason: magosv1.ReasonPlanTooLarge, Message: "the stored plan is too large to evaluate: plan.json exceeds 256 MiB"},
			Notes:   []Note{{Warning, magosv1.ReasonPlanTooLarge, "Plan blocked: the stored plan is too large to evaluate: plan.json exceeds 256 MiB"}},
		},
	}, {
		name:   "the stored bundle is not the one recorded: plan again",
		facts:  GateFacts{Failure: GatePlanNotRecorded, Detail: "bundle digest mismatch", Digest: "sha256:two", Policies: 2},
		policy: &magosv1.PolicyVerdict{Message: "the stored plan is not the one recorded: bundle digest mismatch; re-planning", PoliciesDigest: "sha256:two"},
		cond:   metav1.Condition{Status: metav1.ConditionFalse, Reason: magosv1.ReasonPolicyError, Message: "the stored plan is not the one recorded: bundle digest mismatch; re-planning"},
		fold: GateFold{
			Verdict: GateVerdict{Outcome: GateStalePlan, Reason: magosv1.ReasonPolicyError, Message: "the stored plan is not the one recorded: bundle digest mismatch; re-planning"},
			Notes:   []Note{{Warning, magosv1.ReasonPolicyError, "Plan blocked: the stored plan is not the one recorded: bundle digest mismatch; re-planning"}},
		},
	}, {
		name:   "the stored plan is another plan: plan again",
		facts:  GateFacts{Failure: GatePlanReplaced, StoredPlan: "p2", Digest: "sha256:two", Policies: 2},
		policy: &magosv1.PolicyVerdict{Message: "the stored plan is p2, not p1; re-planning", PoliciesDigest: "sha256:two"},
		cond:   metav1.Condition{Status: metav1.ConditionFalse, Reason: magosv1.ReasonPolicyError, Message: "the stored plan is p2, not p1; re-planning"},
		fold: GateFold{
			Verdict: GateVerdict{Outcome: GateStalePlan, Reason: magosv1.ReasonPolicyError, Message: "the stored plan is p2, not p1; re-planning"},
			Notes:   []Note{{Warning, magosv1.ReasonPolicyError, "Plan blocked: the stored plan is p2, not p1; re-planning"}},
		},
	}, {
		name:   "the stored plan cannot be read: errored",
		facts:  GateFacts{Failure: GatePlanUnreadable, Detail: "secrets \"app-plan\" not found", Digest: "sha256:two", Policies: 2},
		policy: &magosv1.PolicyVerdict{Message: "reading the stored plan: secrets \"app-plan\" not found", PoliciesDigest: "sha256:two"},
		cond:   metav1.Condition{Status: metav1.ConditionFalse, Reason: magosv1.ReasonPolicyError, Message: "reading the stored plan: secrets \"app-plan\" not found"},
		fold: GateFold{
			Verdict: GateVerdict{Outcome: GateErrored, Reason: magosv1.ReasonPolicyError, Message: "reading the stored plan: secrets \"app-plan\" not found"},
			Notes:   []Note{{Warning, magosv1.ReasonPolicyError, "Plan blocked: reading the stored plan: secrets \"app-plan\" not found"}},
		},
	}, {
		name:   "a long verdict is cut to 1 KiB, keeping what the gate left out",
		facts:  GateFacts{Digest: "sha256:two", Policies: 2, Namespace: "team", Ignored: []string{"team-only"}, Engine: policyprotocol.Verdict{Errored: true, Message: long}},
		policy: &magosv1.PolicyVerdict{Message: strings.Repeat("x", 1024-len(ignoredNote)-len("…")) + "…" + ignoredNote, PoliciesDigest: "sha256:two"},
		cond:   metav1.Condition{Status: metav1.ConditionFalse, Reason: magosv1.ReasonPolicyError, Message: strings.Repeat("x", 1024-len(ignoredNote)-len("…")) + "…" + ignoredNote},
		fold: GateFold{
			Verdict: GateVerdict{Outcome: GateErrored, Reason: magosv1.ReasonPolicyError, Message: strings.Repeat("x", 1024-len(ignoredNote)-len("…")) + "…" + ignoredNote},
			Notes:   []Note{ignoredEvent, {Warning, magosv1.ReasonPolicyError, "Plan blocked: " + strings.Repeat("x", 1024-len(ignoredNote)-len("…")) + "…" + ignoredNote}},
		},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			ws := gateWorkspace(tt.before)
			want := gateWorkspace(tt.policy).Status
			tt.cond.Type, tt.cond.ObservedGeneration = magosv1.PolicyPassedCondition, 3
			want.Conditions = []metav1.Condition{tt.cond}

			got := FoldGate(ws, tt.facts)

			for i := range ws.Status.Conditions {
				ws.Status.Conditions[i].LastTransitionTime = metav1.Time{}
			}
			assert.Equal(t, want, ws.Status)
			assert.Equal(t, tt.fold, got)
			assert.LessOrEqual(t, len(ws.Status.Plan.Policy.Message), 1024)
		})
	}
}

// TestReusedVerdict: a recorded verdict holds while the policies and
// waivers it was evaluated against are unchanged and it passed or found
// violations; an errored one, or one of other policies, is evaluated
// again.
func TestReusedVerdict(t *testing.T) {
	expires := metav1.NewTime(time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC))
	for _, tt := range []struct {
		name    string
		verdict *magosv1.PolicyVerdict
		want    GateVerdict
		reused  bool
	}{
		{"none yet", nil, GateVerdict{}, false},
		{"passed", &magosv1.PolicyVerdict{Passed: true, Message: "Plan passed 1 policy", PoliciesDigest: "sha256:d"},
			GateVerdict{Outcome: GatePassed, Message: "Plan passed 1 policy"}, true},
		{"passed with waivers until they expire", &magosv1.PolicyVerdict{Passed: true, Message: "waived", PoliciesDigest: "sha256:d", WaiversExpire: &expires},
			GateVerdict{Outcome: GatePassed, Message: "waived", Until: &expires.Time}, true},
		{"violations", &magosv1.PolicyVerdict{Violations: []magosv1.PolicyViolation{{Policy: "p"}}, Message: "denied", PoliciesDigest: "sha256:d"},
			GateVerdict{Outcome: GateBlocked, Reason: magosv1.ReasonPolicyViolation, Message: "denied"}, true},
		{"errored", &magosv1.PolicyVerdict{Message: "engine down", PoliciesDigest: "sha256:d"}, GateVerdict{}, false},
		{"other policies", &magosv1.PolicyVerdict{Passed: true, PoliciesDigest: "sha256:old"}, GateVerdict{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, reused := ReusedVerdict(&magosv1.PlanStatus{ID: "p1", Policy: tt.verdict}, "sha256:d")
			assert.Equal(t, tt.reused, reused)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestFoldUngated: a fast run no policy gates says so in PolicyPassed, and
// names the namespace's policies that may not gate it.
func TestFoldUngated(t *testing.T) {
	ws := gateWorkspace(nil)
	notes := FoldUngated(ws, "team", []string{"team-only"})
	c := ws.Status.Conditions[0]
	assert.Equal(t, metav1.ConditionTrue, c.Status)
	assert.Equal(t, magosv1.ReasonPolicyPassed, c.Reason)
	assert.Equal(t, "No policy selects this Workspace: its plans are applied without a gate (ignored NamespacedValidatingPolicies team-only: this namespace is not allowed namespaced policies)", c.Message)
	assert.Equal(t, []Note{{Warning, magosv1.ReasonNamespacedPolicyIgnored, "NamespacedValidatingPolicies team-only ignored: namespace team is not allowed namespaced policies (--namespaced-policies-namespace-selector); only cluster ValidatingPolicies gate its plans"}}, notes)

	ws = gateWorkspace(nil)
	assert.Empty(t, FoldUngated(ws, "team", nil))
	assert.Equal(t, "No policy selects this Workspace: its plans are applied without a gate", ws.Status.Conditions[0].Message)
}
