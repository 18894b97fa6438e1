package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// decideCase is one row of TestDecide: facts, and the decision they make.
type decideCase struct {
	name string
	f    Facts
	want decideWant
}

// decideWant is what TestDecide checks of a decision: the reason and the
// message (a part of it) only where set.
type decideWant struct {
	phase   magosv1.WorkspacePhase
	reason  string
	stalled bool
	action  action
	run     runjob.Run
	after   time.Duration
	event   string
	message string
	handles bool
}

// The clock, revision and inputs TestDecide decides every case at.
var decideNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

const decideRev, decideInputs = "main@sha1:b", "sha256:in"

// decide is Decide on c's facts at decideNow, decideRev (unless the case
// sets a revision) and decideInputs, with the facts it asks for answered
// (decideAnswering).
func (c decideCase) decide(t testing.TB) Decision {
	f := c.f
	f.Now = decideNow
	if f.Revision == "" {
		f.Revision = decideRev
	}
	f.Inputs = decideInputs
	return decideAnswering(t, f)
}

// TestDecide pins the Workspace's decision table (decide's doc comment,
// and docs/architecture.md's table rendered from decisionTable): for each
// set of facts, the phase, reason, whether it stalls, and the one action.
func TestDecide(t *testing.T) {
	for _, tt := range decideCases() {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.decide(t)
			assert.Equal(t, tt.want.phase, d.Phase, "phase")
			if tt.want.reason != "" {
				assert.Equal(t, tt.want.reason, d.Reason, "reason")
			}
			assert.Equal(t, tt.want.stalled, d.Stalled, "stalled")
			assert.Equal(t, tt.want.action, d.Action, "action")
			assert.Equal(t, tt.want.run, d.Run, "run")
			assert.Equal(t, tt.want.after, d.After, "after")
			if tt.want.event != "" {
				if assert.NotNil(t, d.Event, "event") {
					assert.Equal(t, tt.want.event, d.Event.Reason)
				}
			} else {
				assert.Nil(t, d.Event, "event")
			}
			assert.Contains(t, d.Message, tt.want.message)
			if tt.f.Deletion == nil {
				assert.NotContains(t, d.Message, "being deleted", "only a deleted Workspace says it is being deleted")
			}
			assert.Equal(t, tt.want.handles, d.HandlesRequest, "handles the reconcile request")
		})
	}
}

// decideCases are TestDecide's rows.
func decideCases() []decideCase {
	now := decideNow
	at := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(d)} }
	const rev, in = decideRev, decideInputs
	plan := func(mut ...func(*magosv1.PlanStatus)) *magosv1.PlanStatus {
		p := &magosv1.PlanStatus{ID: "p2", Revision: rev, InputsDigest: in, Digest: "sha256:plan", HasChanges: true, Add: 1, Time: at(-time.Hour)}
		for _, m := range mut {
			m(p)
		}
		return p
	}
	noChanges := func(p *magosv1.PlanStatus) { p.HasChanges, p.Add = false, 0 }
	destroyMode := func(p *magosv1.PlanStatus) { p.Mode = magosv1.PlanModeDestroy }
	applied := &magosv1.AppliedStatus{PlanID: "p1", Revision: "main@sha1:a"}
	appliedP2 := &magosv1.AppliedStatus{PlanID: "p2", Revision: rev}
	failed := func(reason string) *magosv1.RunStatus {
		return &magosv1.RunStatus{Job: "ws-plan-x", Phase: magosv1.RunPlan, Result: magosv1.ResultFailed, Reason: reason, Message: "boom",
			Revision: rev, InputsDigest: in, Finished: at(-10 * time.Second)}
	}
	retryAt := func(d time.Duration) *magosv1.RetryStatus { return &magosv1.RetryStatus{Attempts: 1, NextTime: at(d)} }
	stalled := &magosv1.RetryStatus{Attempts: 1}
	passed := GateVerdict{Outcome: GatePassed}
	lock := &magosv1.LockStatus{Holder: "run-1", Lease: "lock-tfstate-default-ws"}
	errored := &magosv1.ErroredStateStatus{Job: "ws-apply-1", Secret: "tfstate-errored-ws", StateSecret: "tfstate-default-ws"}
	del := func(d DeletionFacts) *DeletionFacts { return &d }
	rq := &magosv1.PlanRequest{ID: "r1", Replace: []string{"terraform_data.web"}}
	forRequest := func(p *magosv1.PlanStatus) { p.Request = rq }
	blocked := GateVerdict{Outcome: GateBlocked, Reason: magosv1.ReasonPolicyViolation, Message: "keep-db"}
	ofRevA := func(p *magosv1.PlanStatus) { p.Revision = "main@sha1:a" }
	read := func(digest string) func(*magosv1.PlanStatus) {
		return func(p *magosv1.PlanStatus) { p.ContentDigest = digest }
	}
	appliedA := &magosv1.AppliedStatus{PlanID: "p2", Revision: "main@sha1:a"}

	type want = decideWant
	return []decideCase{
		// 1. Runs in progress.
		{name: "a plan in progress", f: Facts{Running: &magosv1.RunStatus{Job: "ws-plan-1", Phase: magosv1.RunPlan, Revision: rev}},
			want: want{phase: magosv1.PhasePlanning, reason: magosv1.ReasonPlanning, message: "Run ws-plan-1 (plan) of revision " + rev + " is in progress"}},
		{name: "an apply in progress", f: Facts{Running: &magosv1.RunStatus{Job: "ws-apply-1", Phase: magosv1.RunApply}},
			want: want{phase: magosv1.PhaseApplying, reason: magosv1.ReasonApplying}},
		{name: "a destroy apply in progress while deleted", f: Facts{Running: &magosv1.RunStatus{Job: "ws-apply-1", Phase: magosv1.RunApply, Mode: magosv1.PlanModeDestroy}, Deletion: del(DeletionFacts{})},
			want: want{phase: magosv1.PhaseDestroying, reason: magosv1.ReasonDestroying, message: "being deleted"}},
		{name: "a destroy apply in progress in mode Destroy: nothing is deleted", f: Facts{Running: &magosv1.RunStatus{Job: "ws-apply-1", Phase: magosv1.RunApply, Mode: magosv1.PlanModeDestroy, Revision: rev}, Mode: magosv1.ModeDestroy},
			want: want{phase: magosv1.PhaseDestroying, reason: magosv1.ReasonDestroying, message: "Run ws-apply-1 (destroy apply) of revision " + rev + " is in progress"}},
		{name: "a runner Pod of an earlier run still runs", f: Facts{LivePod: &LivePod{Name: "ws-apply-1-x", Phase: magosv1.RunApply}, Plan: plan()},
			want: want{phase: magosv1.PhaseApplying, reason: magosv1.ReasonApplying, message: "waiting for it to end"}},
		{name: "a run in progress goes before a held lock", f: Facts{Running: &magosv1.RunStatus{Phase: magosv1.RunPlan}, Lock: lock},
			want: want{phase: magosv1.PhasePlanning, reason: magosv1.ReasonPlanning}},

		// 2. Errored state.
		{name: "state not saved stalls", f: Facts{Name: "ws", ErroredState: errored, Plan: plan()},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonStateNotSaved, stalled: true, message: "kubectl annotate workspace ws magos.dev/state-restored=ws-apply-1"}},
		{name: "restored state plans again", f: Facts{ErroredState: errored, StateRestored: true},
			want: want{phase: magosv1.PhasePlanning, reason: magosv1.ReasonStateRestored, action: ActClearErroredState}},
		{name: "state not saved holds a deletion too", f: Facts{ErroredState: errored, Deletion: del(DeletionFacts{})},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonStateNotSaved, stalled: true}},

		// 3. Locks.
		{name: "a held lock stalls", f: Facts{Name: "ws", Lock: lock, Plan: plan()},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonStateLocked, stalled: true, message: "kubectl magos unlock ws (or kubectl annotate workspace ws magos.dev/unlock=run-1 --overwrite)"}},
		{name: "unlock while a run still runs is refused", f: Facts{Lock: lock, Unlock: &UnlockCheck{Running: "Job ws-apply-1"}},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonStateLocked, stalled: true, message: "Job ws-apply-1 of this Workspace is still running"}},
		{name: "unlock of a lock now held by another is refused", f: Facts{Lock: lock, Unlock: &UnlockCheck{Holder: "run-2"}},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonStateLocked, stalled: true, message: `now held by "run-2", not "run-1"`}},
		{name: "unlock releases the lock", f: Facts{Lock: lock, Unlock: &UnlockCheck{}, LastRun: failed(magosv1.ReasonApplyFailed), Retry: retryAt(time.Minute)},
			want: want{phase: magosv1.PhasePlanning, reason: magosv1.ReasonUnlocked, action: ActReleaseLock}},

		// 4. Failures.
		{name: "a retried failure waits for its retry time", f: Facts{LastRun: failed(magosv1.ReasonInitFailed), Retry: retryAt(20 * time.Second)},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonInitFailed, action: ActWait, after: 20 * time.Second, message: "retrying in 20s"}},
		{name: "a retried failure plans again once due", f: Facts{LastRun: failed(magosv1.ReasonInitFailed), Retry: retryAt(-time.Second)},
			want: want{phase: magosv1.PhasePlanning, reason: magosv1.ReasonPlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "a failure without a reason is RunFailed and retried", f: Facts{LastRun: failed(""), Retry: retryAt(time.Second)},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonRunFailed, action: ActWait, after: time.Second}},
		{name: "engine not found stalls", f: Facts{LastRun: failed(magosv1.ReasonEngineNotFound), Retry: stalled},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonEngineNotFound, stalled: true, message: "not retried until the revision or inputs change"}},
		{name: "a rejected artifact stalls", f: Facts{LastRun: failed(magosv1.ReasonArtifactRejected), Retry: stalled},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonArtifactRejected, stalled: true}},
		{name: "a failure of another revision is history", f: Facts{LastRun: failed(magosv1.ReasonEngineNotFound), Retry: stalled, Revision: "main@sha1:c"},
			want: want{phase: magosv1.PhasePlanning, reason: magosv1.ReasonPlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "a failure without retry state (released) plans", f: Facts{LastRun: failed(magosv1.ReasonStateNotSaved)},
			want: want{phase: magosv1.PhasePlanning, reason: magosv1.ReasonPlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "retries exhausted stall", f: Facts{Name: "ws", LastRun: failed(magosv1.ReasonInitFailed), Retry: &magosv1.RetryStatus{Attempts: 3}},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonRetriesExhausted, stalled: true, message: "InitFailed, 3 attempts in a row"}},
		{name: "a reconcile request retries a stalled failure now", f: Facts{LastRun: failed(magosv1.ReasonEngineNotFound), Retry: stalled, Requested: true},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}, handles: true}},
		{name: "a reconcile request retries now", f: Facts{LastRun: failed(magosv1.ReasonInitFailed), Retry: retryAt(time.Hour), Requested: true},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}, handles: true}},
		{name: "a reconcile request plans again although applied", f: Facts{Plan: plan(), Applied: appliedP2, Requested: true},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}, handles: true}},
		{name: "a reconcile request waits for the run in progress", f: Facts{Running: &magosv1.RunStatus{Phase: magosv1.RunApply}, Requested: true},
			want: want{phase: magosv1.PhaseApplying}},
		{name: "a reconcile request does not release a lock", f: Facts{Lock: lock, Requested: true},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonStateLocked, stalled: true}},

		// 6. Planning.
		{name: "no plan: plan", f: Facts{},
			want: want{phase: magosv1.PhasePlanning, reason: magosv1.ReasonPlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "a plan of another revision: plan", f: Facts{Plan: plan(func(p *magosv1.PlanStatus) { p.Revision = "main@sha1:a" })},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "a plan of other inputs: plan", f: Facts{Plan: plan(func(p *magosv1.PlanStatus) { p.InputsDigest = "sha256:old" })},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},

		// 6. A new revision that changes nothing the Workspace reads.
		{name: "a revision that changes nothing read carries the applied plan", f: Facts{Plan: plan(ofRevA, read("sha256:c")), Applied: appliedA, Content: &ContentCheck{Digest: "sha256:c", Dirs: []string{"envs/prod", "modules/net"}}},
			want: want{phase: magosv1.PhaseIdle, action: ActCarryRevision, message: "Revision " + rev + " changes nothing the Workspace reads (envs/prod, modules/net): plan p2 of revision main@sha1:a stands"}},
		{name: "a carried plan names the revision it was made from", f: Facts{Plan: plan(ofRevA, read("sha256:c"), func(p *magosv1.PlanStatus) { p.PlannedRevision = "main@sha1:0" }), Applied: appliedA, Content: &ContentCheck{Digest: "sha256:c"}},
			want: want{phase: magosv1.PhaseIdle, action: ActCarryRevision, message: "plan p2 of revision main@sha1:0 stands"}},
		{name: "a revision that changes a file read: plan", f: Facts{Plan: plan(ofRevA, read("sha256:c")), Applied: appliedA, Content: &ContentCheck{Digest: "sha256:d"}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "what the revision changes not known: plan", f: Facts{Plan: plan(ofRevA, read("sha256:c")), Applied: appliedA, Content: &ContentCheck{}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "what the applied plan read not known: plan", f: Facts{Plan: plan(ofRevA), Applied: appliedA, Content: &ContentCheck{}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "a pending plan of the earlier revision is carried with its approvals", f: Facts{Plan: plan(ofRevA, read("sha256:c")), Applied: applied, Content: &ContentCheck{Digest: "sha256:c"}, Approval: magosv1.ApprovalManual},
			want: want{phase: magosv1.PhaseIdle, action: ActCarryRevision, message: "pending plan p2 of revision main@sha1:a stands for it, with its approvals"}},
		{name: "a pending plan of a PlanOnly Workspace is carried", f: Facts{Plan: plan(ofRevA, read("sha256:c")), Content: &ContentCheck{Digest: "sha256:c"}, Mode: magosv1.ModePlanOnly},
			want: want{phase: magosv1.PhaseIdle, action: ActCarryRevision, message: "pending plan p2"}},
		{name: "a pending plan of a revision that changes a file read: plan", f: Facts{Plan: plan(ofRevA, read("sha256:c")), Applied: applied, Content: &ContentCheck{Digest: "sha256:d"}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "a pending plan whose content is unknown now: plan", f: Facts{Plan: plan(ofRevA, read("sha256:c")), Applied: applied, Content: &ContentCheck{Unknown: "file(var.x)"}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "a configuration file read is refused: stalled, no plan", f: Facts{Content: &ContentCheck{Refused: "envs/x/main.tf: it nests deeper than 256 levels"}},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonConfigurationRefused, stalled: true, message: "it nests deeper than 256 levels"}},
		{name: "a refused configuration stalls a drift re-plan too", f: Facts{Plan: plan(), Applied: appliedP2, Interval: time.Minute, Content: &ContentCheck{Refused: "x"}},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonConfigurationRefused, stalled: true}},
		{name: "the inputs changed too: plan", f: Facts{Plan: plan(ofRevA, read("sha256:c"), func(p *magosv1.PlanStatus) { p.InputsDigest = "sha256:old" }), Applied: appliedA, Content: &ContentCheck{Digest: "sha256:c"}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "a plan request is pending: plan", f: Facts{Plan: plan(ofRevA, read("sha256:c")), Applied: appliedA, Content: &ContentCheck{Digest: "sha256:c"}, Request: rq},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Request: rq}}},
		{name: "a reconcile request plans whatever the revision changes", f: Facts{Plan: plan(ofRevA, read("sha256:c")), Applied: appliedA, Content: &ContentCheck{Digest: "sha256:c"}, Requested: true},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}, handles: true}},

		// 6. The fast path: where nothing decides on the plan.
		{name: "nothing decides: plan and apply in one run", f: Facts{Deciders: &Deciders{}},
			want: want{phase: magosv1.PhaseApplying, reason: magosv1.ReasonApplying, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlanApply}}},
		{name: "nothing decides on a drift re-plan: plan and apply in one run", f: Facts{Plan: plan(), Applied: appliedP2, Interval: time.Minute, Deciders: &Deciders{}},
			want: want{phase: magosv1.PhaseApplying, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlanApply, Drift: true}}},
		{name: "a full plan request takes the fast path", f: Facts{Request: &magosv1.PlanRequest{ID: "r0"}, Deciders: &Deciders{}},
			want: want{phase: magosv1.PhaseApplying, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlanApply, Request: &magosv1.PlanRequest{ID: "r0"}}}},
		{name: "a policy selects the Workspace: plan", f: Facts{Deciders: &Deciders{Policies: "policy p selects the Workspace"}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "a Rollout governs the Workspace: plan", f: Facts{Deciders: &Deciders{Rollout: "r"}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "approval Manual: plan", f: Facts{Approval: magosv1.ApprovalManual, Deciders: &Deciders{}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "a scoped plan request: plan", f: Facts{Request: rq, Deciders: &Deciders{}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Request: rq}}},
		{name: "mode Destroy: a destroy plan", f: Facts{Mode: magosv1.ModeDestroy, Deciders: &Deciders{}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Mode: magosv1.PlanModeDestroy}}},
		{name: "mode PlanOnly: plan", f: Facts{Mode: magosv1.ModePlanOnly, Deciders: &Deciders{}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "the cluster asks for separate Jobs: plan", f: Facts{SeparatePlans: true, Deciders: &Deciders{}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},

		// 7. Settled.
		{name: "a plan without changes is recorded as applied", f: Facts{Plan: plan(noChanges), Applied: applied},
			want: want{phase: magosv1.PhaseIdle, action: ActRecordNoChanges}},
		{name: "a plan without changes awaits promotion", f: Facts{Plan: plan(noChanges), Applied: applied, Admission: Admission{Denied: true, Message: "stage prod is not admitted"}},
			want: want{phase: magosv1.PhaseAwaitingPromotion, reason: magosv1.ReasonAwaitingPromotion, event: magosv1.ReasonAwaitingPromotion, message: "stage prod is not admitted"}},
		{name: "applied: idle", f: Facts{Plan: plan(), Applied: appliedP2},
			want: want{phase: magosv1.PhaseIdle, message: "Applied revision " + rev}},
		{name: "applied: drift check not due", f: Facts{Plan: plan(), Applied: appliedP2, Interval: 90 * time.Minute},
			want: want{phase: magosv1.PhaseIdle, action: ActWait, after: 30 * time.Minute}},
		{name: "applied: drift check due", f: Facts{Plan: plan(), Applied: appliedP2, Interval: time.Hour},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Drift: true}}},

		// 8. Policy gate.
		{name: "a violation stalls", f: Facts{Plan: plan(), Applied: applied, Gate: GateVerdict{Outcome: GateBlocked, Reason: magosv1.ReasonPolicyViolation, Message: "no-public-buckets"}},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonPolicyViolation, stalled: true, message: "Plan p2 is blocked by policy: no-public-buckets"}},
		{name: "a plan too large to evaluate stalls", f: Facts{Plan: plan(), Gate: GateVerdict{Outcome: GateBlocked, Reason: magosv1.ReasonPlanTooLarge, Message: "too large"}},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonPlanTooLarge, stalled: true}},
		{name: "a policy error is evaluated again, not stalled", f: Facts{Plan: plan(), Gate: GateVerdict{Outcome: GateErrored, Reason: magosv1.ReasonPolicyError, Message: "selecting policies: boom"}},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonPolicyError, action: ActWait, after: policyRetryInterval, message: "evaluating again in 30s"}},
		{name: "a stored plan that is not the one in status is planned again", f: Facts{Plan: plan(), Gate: GateVerdict{Outcome: GateStalePlan}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},

		{name: "a plan a waiver passed waits for approval until the waiver expires", f: Facts{Now: now, Plan: plan(), Approval: magosv1.ApprovalManual,
			Gate: GateVerdict{Outcome: GatePassed, Until: &[]time.Time{now.Add(time.Hour)}[0]}},
			want: want{phase: magosv1.PhaseAwaitingApproval, reason: magosv1.ReasonAwaitingApproval, event: magosv1.ReasonAwaitingApproval, action: ActWait, after: time.Hour}},
		{name: "a plan a waiver passed waits for promotion until the waiver expires", f: Facts{Now: now, Plan: plan(), Admission: Admission{Denied: true, Message: "waiting for stage dev"},
			Gate: GateVerdict{Outcome: GatePassed, Until: &[]time.Time{now.Add(time.Minute)}[0]}},
			want: want{phase: magosv1.PhaseAwaitingPromotion, reason: magosv1.ReasonAwaitingPromotion, event: magosv1.ReasonAwaitingPromotion, action: ActWait, after: time.Minute}},
		{name: "a plan a waiver passed applies without waiting", f: Facts{Now: now, Plan: plan(), Gate: GateVerdict{Outcome: GatePassed, Until: &[]time.Time{now.Add(time.Minute)}[0]}},
			want: want{phase: magosv1.PhaseApplying, reason: magosv1.ReasonApplying, action: ActStart, run: runjob.Run{Phase: magosv1.RunApply, PlanID: "p2", PlanDigest: "sha256:plan"}}},

		// 9–11. Promotion, approval, apply.
		{name: "not admitted by the Rollout", f: Facts{Plan: plan(), Gate: passed, Admission: Admission{Denied: true, Message: "waiting for stage dev"}},
			want: want{phase: magosv1.PhaseAwaitingPromotion, reason: magosv1.ReasonAwaitingPromotion, event: magosv1.ReasonAwaitingPromotion}},
		{name: "manual approval pending", f: Facts{Name: "ws", Plan: plan(), Gate: passed, Approval: magosv1.ApprovalManual, ApprovedPlan: "p1"},
			want: want{phase: magosv1.PhaseAwaitingApproval, reason: magosv1.ReasonAwaitingApproval, event: magosv1.ReasonAwaitingApproval, message: `set spec.approvedPlan to "p2" (kubectl magos approve ws --plan p2)`}},
		{name: "approved: apply", f: Facts{Plan: plan(), Gate: passed, Approval: magosv1.ApprovalManual, ApprovedPlan: "p2"},
			want: want{phase: magosv1.PhaseApplying, reason: magosv1.ReasonApplying, action: ActStart, run: runjob.Run{Phase: magosv1.RunApply, PlanID: "p2", PlanDigest: "sha256:plan"}}},
		{name: "approved by a user's entry: apply", f: Facts{Plan: plan(), Gate: passed, Approval: magosv1.ApprovalManual,
			Approvals: []magosv1.Approval{{Plan: "p1", User: "bob"}, {Plan: "p2", Digest: "sha256:plan", User: "alice"}}},
			want: want{phase: magosv1.PhaseApplying, reason: magosv1.ReasonApplying, action: ActStart, run: runjob.Run{Phase: magosv1.RunApply, PlanID: "p2", PlanDigest: "sha256:plan"}}},
		{name: "a rule asks two approvals from a group: one counts", f: Facts{Name: "ws", Plan: plan(), Gate: passed, Approval: magosv1.ApprovalManual,
			Review: &Review{Rule: "deletions", Needed: 2, Groups: []string{"platform-admins"}, Counted: []string{"alice"}, Ignored: []string{"bob"}}},
			want: want{phase: magosv1.PhaseAwaitingApproval, reason: magosv1.ReasonAwaitingApproval, event: magosv1.ReasonAwaitingApproval,
				message: "awaits approvals: 1 of 2 approvals (rule deletions), from members of platform-admins (not counted: bob, in none of them) (kubectl magos approve ws --plan p2)"}},
		{name: "a rule asks two approvals: both given, apply", f: Facts{Plan: plan(), Gate: passed, Approval: magosv1.ApprovalManual,
			Review: &Review{Rule: "deletions", Needed: 2, Counted: []string{"alice", "carol"}}},
			want: want{phase: magosv1.PhaseApplying, reason: magosv1.ReasonApplying, action: ActStart, run: runjob.Run{Phase: magosv1.RunApply, PlanID: "p2", PlanDigest: "sha256:plan"}}},
		{name: "a rule approves the plan: apply without an approval", f: Facts{Plan: plan(), Gate: passed, Approval: magosv1.ApprovalManual,
			Review: &Review{Rule: "additions", Auto: true, Needed: 1}},
			want: want{phase: magosv1.PhaseApplying, reason: magosv1.ReasonApplying, action: ActStart, run: runjob.Run{Phase: magosv1.RunApply, PlanID: "p2", PlanDigest: "sha256:plan"}}},
		{name: "an approval the plan needed expired: plan again", f: Facts{Plan: plan(), Gate: passed, Approval: magosv1.ApprovalManual,
			Review: &Review{Needed: 1, Expired: []string{"alice"}, MaxAge: time.Hour}},
			want: want{phase: magosv1.PhasePlanning, reason: magosv1.ReasonApprovalExpired, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}, event: magosv1.ReasonApprovalExpired,
				message: "The approval of plan p2 by alice is older than 1h0m0s (spec.approvalMaxAge): planning again"}},
		{name: "awaiting approvals wakes when the first one counted expires", f: Facts{Plan: plan(), Gate: passed, Approval: magosv1.ApprovalManual,
			Review: &Review{Rule: "two", Needed: 2, Counted: []string{"alice"}, MaxAge: time.Hour, Expires: &[]time.Time{now.Add(10 * time.Minute)}[0]}},
			want: want{phase: magosv1.PhaseAwaitingApproval, reason: magosv1.ReasonAwaitingApproval, event: magosv1.ReasonAwaitingApproval, action: ActWait, after: 10 * time.Minute,
				message: "1 of 2 approvals (rule two)"}},
		{name: "an entry naming the plan with another digest approves nothing", f: Facts{Plan: plan(), Gate: passed, Approval: magosv1.ApprovalManual,
			Approvals: []magosv1.Approval{{Plan: "p2", Digest: "sha256:other", User: "alice"}}},
			want: want{phase: magosv1.PhaseAwaitingApproval, reason: magosv1.ReasonAwaitingApproval, event: magosv1.ReasonAwaitingApproval}},
		{name: "a destroy plan approved by a user's entry while deleted: destroy", f: Facts{Deletion: del(DeletionFacts{}), Plan: plan(destroyMode), Gate: passed, Approval: magosv1.ApprovalManual,
			Approvals: []magosv1.Approval{{Plan: "p2", Digest: "sha256:plan", User: "alice"}}},
			want: want{phase: magosv1.PhaseDestroying, action: ActStart, run: runjob.Run{Phase: magosv1.RunApply, Mode: magosv1.PlanModeDestroy, PlanID: "p2", PlanDigest: "sha256:plan"}}},
		{name: "auto approval: apply", f: Facts{Plan: plan(), Gate: passed, Applied: applied},
			want: want{phase: magosv1.PhaseApplying, action: ActStart, run: runjob.Run{Phase: magosv1.RunApply, PlanID: "p2", PlanDigest: "sha256:plan"}}},

		// Mode PlanOnly (rules 7–11).
		{name: "plan-only: a plan with changes is reported, not applied", f: Facts{Mode: magosv1.ModePlanOnly, Plan: plan(), Applied: applied, Gate: passed},
			want: want{phase: magosv1.PhaseIdle, reason: magosv1.ReasonPlanOnly, message: "Plan-only: plan p2 of revision " + rev + " has changes (+1 ~0 -0) and passed policy; it is not applied"}},
		{name: "plan-only: an approved plan is not applied", f: Facts{Mode: magosv1.ModePlanOnly, Plan: plan(), Gate: passed, Approval: magosv1.ApprovalManual, ApprovedPlan: "p2"},
			want: want{phase: magosv1.PhaseIdle, reason: magosv1.ReasonPlanOnly, message: "it is not applied"}},
		{name: "plan-only: a blocked plan is reported, not stalled", f: Facts{Mode: magosv1.ModePlanOnly, Plan: plan(), Gate: blocked},
			want: want{phase: magosv1.PhaseIdle, reason: magosv1.ReasonPlanOnly, message: "would be blocked by policy: keep-db"}},
		{name: "plan-only: a policy error is evaluated again", f: Facts{Mode: magosv1.ModePlanOnly, Plan: plan(), Gate: GateVerdict{Outcome: GateErrored, Reason: magosv1.ReasonPolicyError, Message: "boom"}},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonPolicyError, action: ActWait, after: policyRetryInterval}},
		{name: "plan-only: a stale stored plan is planned again", f: Facts{Mode: magosv1.ModePlanOnly, Plan: plan(), Gate: GateVerdict{Outcome: GateStalePlan}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},
		{name: "plan-only: the plan is checked again after the interval", f: Facts{Mode: magosv1.ModePlanOnly, Plan: plan(), Gate: blocked, Interval: time.Hour},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Drift: true}}},
		{name: "plan-only: the drift check waits for the interval", f: Facts{Mode: magosv1.ModePlanOnly, Plan: plan(), Gate: passed, Interval: 2 * time.Hour},
			want: want{phase: magosv1.PhaseIdle, reason: magosv1.ReasonPlanOnly, action: ActWait, after: time.Hour}},
		{name: "plan-only: no Rollout holds a plan without changes", f: Facts{Mode: magosv1.ModePlanOnly, Plan: plan(noChanges), Admission: Admission{Denied: true}},
			want: want{phase: magosv1.PhaseIdle, action: ActRecordNoChanges, message: "Plan-only: revision " + rev + " has no changes"}},

		// Mode Destroy (rules 6–11).
		{name: "destroy mode: a normal plan is replaced by a destroy plan", f: Facts{Mode: magosv1.ModeDestroy, Plan: plan(), Applied: appliedP2},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Mode: magosv1.PlanModeDestroy}}},
		{name: "destroy mode: the destroy plan is blocked by policy", f: Facts{Mode: magosv1.ModeDestroy, Plan: plan(destroyMode), Gate: blocked},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonPolicyViolation, stalled: true, message: "Destroy plan p2 is blocked by policy: keep-db"}},
		{name: "destroy mode: the destroy plan awaits approval", f: Facts{Name: "ws", Mode: magosv1.ModeDestroy, Plan: plan(destroyMode), Gate: passed, Approval: magosv1.ApprovalManual, ApprovedPlan: "p1"},
			want: want{phase: magosv1.PhaseAwaitingApproval, reason: magosv1.ReasonAwaitingApproval, event: magosv1.ReasonAwaitingApproval, message: "Destroy plan p2 (+1 ~0 -0) of revision " + rev + " awaits approval"}},
		{name: "destroy mode: apply exactly the approved destroy plan (no Rollout gates it)", f: Facts{Mode: magosv1.ModeDestroy, Plan: plan(destroyMode), Gate: passed,
			Approval: magosv1.ApprovalManual, ApprovedPlan: "p2", Admission: Admission{Denied: true}},
			want: want{phase: magosv1.PhaseDestroying, reason: magosv1.ReasonDestroying, action: ActStart, run: runjob.Run{Phase: magosv1.RunApply, Mode: magosv1.PlanModeDestroy, PlanID: "p2", PlanDigest: "sha256:plan"}}},
		{name: "destroy mode: destroyed, the drift check plans a destroy again", f: Facts{Mode: magosv1.ModeDestroy, Plan: plan(destroyMode), Applied: appliedP2, Interval: time.Hour},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Mode: magosv1.PlanModeDestroy, Drift: true}}},
		{name: "destroy mode: nothing left to destroy", f: Facts{Mode: magosv1.ModeDestroy, Plan: plan(destroyMode, noChanges), Applied: applied},
			want: want{phase: magosv1.PhaseIdle, action: ActRecordNoChanges, message: "Destroyed: nothing of revision " + rev + " is left"}},
		{name: "back to mode Apply: a destroy plan is replaced by a normal plan", f: Facts{Mode: magosv1.ModeApply, Plan: plan(destroyMode), Applied: appliedP2},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan}}},

		// Plan requests (rule 6).
		{name: "a plan request plans with its addresses", f: Facts{Plan: plan(), Applied: appliedP2, Request: rq},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Request: rq}}},
		{name: "a plan request in destroy mode plans a destroy with its addresses", f: Facts{Mode: magosv1.ModeDestroy, Plan: plan(destroyMode), Request: rq},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Mode: magosv1.PlanModeDestroy, Request: rq}}},
		{name: "the plan made for the request is applied", f: Facts{Plan: plan(forRequest), Request: rq, Gate: passed},
			want: want{phase: magosv1.PhaseApplying, action: ActStart, run: runjob.Run{Phase: magosv1.RunApply, PlanID: "p2", PlanDigest: "sha256:plan"}}},
		{name: "a handled request's plan is still applied", f: Facts{Plan: plan(forRequest), Gate: passed},
			want: want{phase: magosv1.PhaseApplying, action: ActStart, run: runjob.Run{Phase: magosv1.RunApply, PlanID: "p2", PlanDigest: "sha256:plan"}}},
		{name: "after the request's plan is applied the drift check is a full plan", f: Facts{Plan: plan(forRequest), Applied: appliedP2, Interval: time.Hour},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Drift: true}}},
		{name: "a reconcile request plans with the pending plan request", f: Facts{Plan: plan(), Applied: appliedP2, Requested: true, Request: rq},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Request: rq}, handles: true}},
		{name: "a stale stored plan of a request is planned again with it", f: Facts{Plan: plan(forRequest), Request: rq, Gate: GateVerdict{Outcome: GateStalePlan}},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Request: rq}}},

		// 5. Deletion.
		{name: "deletion: destroyed", f: Facts{Deletion: del(DeletionFacts{}), LastRun: &magosv1.RunStatus{Phase: magosv1.RunApply, Mode: magosv1.PlanModeDestroy, Result: magosv1.ResultSucceeded}},
			want: want{phase: magosv1.PhaseDestroying, reason: magosv1.ReasonDestroyed, action: ActFinishDeletion}},
		{name: "deletion: no artifact skips the destroy", f: Facts{Deletion: del(DeletionFacts{Skip: "no artifact"})},
			want: want{phase: magosv1.PhaseDestroying, reason: magosv1.ReasonDestroySkipped, action: ActFinishDeletion, message: "no artifact"}},
		{name: "deletion: a failed destroy is retried whatever its reason", f: Facts{Deletion: del(DeletionFacts{}),
			LastRun: &magosv1.RunStatus{Job: "ws-apply-9", Phase: magosv1.RunApply, Mode: magosv1.PlanModeDestroy, Result: magosv1.ResultFailed, Reason: magosv1.ReasonEngineNotFound, Revision: rev, InputsDigest: in},
			Retry:   retryAt(5 * time.Second)},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonDestroyFailed, action: ActWait, after: 5 * time.Second, message: "unset spec.destroyOnDelete"}},
		{name: "deletion: a stalled failure from before the deletion does not hold it", f: Facts{Deletion: del(DeletionFacts{}), LastRun: failed(magosv1.ReasonEngineNotFound), Retry: stalled},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Mode: magosv1.PlanModeDestroy}}},
		{name: "deletion: a reconcile request retries a failed destroy now", f: Facts{Deletion: del(DeletionFacts{SkipGate: true}), Requested: true,
			LastRun: &magosv1.RunStatus{Phase: magosv1.RunDestroy, Result: magosv1.ResultFailed, Revision: rev, InputsDigest: in}, Retry: retryAt(time.Hour)},
			want: want{phase: magosv1.PhaseDestroying, action: ActStart, run: runjob.Run{Phase: magosv1.RunDestroy}, handles: true}},
		{name: "deletion: skip the gate where allowed", f: Facts{Deletion: del(DeletionFacts{SkipGate: true})},
			want: want{phase: magosv1.PhaseDestroying, action: ActStart, run: runjob.Run{Phase: magosv1.RunDestroy}}},
		{name: "deletion: plan the destroy (skip refused)", f: Facts{Deletion: del(DeletionFacts{GateRefused: true}), Plan: plan()},
			want: want{phase: magosv1.PhasePlanning, action: ActStart, run: runjob.Run{Phase: magosv1.RunPlan, Mode: magosv1.PlanModeDestroy}, event: magosv1.ReasonDestroyGateEnforced}},
		{name: "deletion: nothing left to destroy", f: Facts{Deletion: del(DeletionFacts{}), Plan: plan(destroyMode, noChanges)},
			want: want{phase: magosv1.PhaseDestroying, reason: magosv1.ReasonDestroyed, action: ActFinishDeletion, message: "nothing is left to destroy"}},
		{name: "deletion: the destroy plan is blocked by policy", f: Facts{Deletion: del(DeletionFacts{}), Plan: plan(destroyMode), Gate: GateVerdict{Outcome: GateBlocked, Reason: magosv1.ReasonPolicyViolation, Message: "keep-db"}},
			want: want{phase: magosv1.PhaseFailed, reason: magosv1.ReasonPolicyViolation, stalled: true, message: "unset spec.destroyOnDelete"}},
		{name: "deletion: the destroy plan awaits approval", f: Facts{Deletion: del(DeletionFacts{}), Plan: plan(destroyMode), Gate: passed, Approval: magosv1.ApprovalManual},
			want: want{phase: magosv1.PhaseAwaitingApproval, reason: magosv1.ReasonDestroyAwaitingApproval, event: magosv1.ReasonDestroyAwaitingApproval}},
		{name: "deletion: apply the destroy plan (no Rollout gates it)", f: Facts{Deletion: del(DeletionFacts{}), Plan: plan(destroyMode), Gate: passed, Admission: Admission{Denied: true}},
			want: want{phase: magosv1.PhaseDestroying, action: ActStart, run: runjob.Run{Phase: magosv1.RunApply, Mode: magosv1.PlanModeDestroy, PlanID: "p2", PlanDigest: "sha256:plan"}}},

		// The run queue holds a run that would start.
		{name: "a plan the queue holds waits without a Job", f: Facts{Held: &HeldRun{After: time.Minute, Priority: "normal", Bound: "this controller runs at most 4 runs at once"}},
			want: want{phase: magosv1.PhaseWaiting, reason: magosv1.ReasonQueued, action: ActWait, after: time.Minute, message: "The plan run is queued (priority normal): this controller runs at most 4 runs at once"}},
		{name: "a drift re-plan the queue holds leaves the Workspace Idle", f: Facts{Plan: plan(noChanges), Applied: appliedP2, Interval: time.Minute,
			Held: &HeldRun{After: time.Minute, Priority: "drift", Bound: "this controller runs at most 4 runs at once"}},
			want: want{phase: magosv1.PhaseIdle, action: ActWait, after: time.Minute, message: "; the drift plan is queued: this controller runs at most 4 runs at once"}},
		{name: "the queue holds no decision that starts nothing", f: Facts{Plan: plan(), Gate: passed, Approval: magosv1.ApprovalManual, Held: &HeldRun{After: time.Minute, Bound: "x"}},
			want: want{phase: magosv1.PhaseAwaitingApproval, reason: magosv1.ReasonAwaitingApproval, event: magosv1.ReasonAwaitingApproval}},
	}
}

func ptrTo[T any](v T) *T { return &v }
