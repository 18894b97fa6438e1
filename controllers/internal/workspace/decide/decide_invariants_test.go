package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestDecisionsAreConsistent checks, over the decision table's facts and
// their combinations, what must hold for every decision: a Stalled one
// neither starts a run nor waits to retry; a Failed one is either Stalled
// or waits; only Failed decisions stall. Outside a deletion every mode
// keeps its promise: PlanOnly starts no apply, Destroy plans and applies
// only destroys, Apply plans normally, and a pending plan request's
// addresses go into every plan started.
func TestDecisionsAreConsistent(t *testing.T) {
	now := time.Now()
	const rev, in = "r", "i"
	plans := []*magosv1.PlanStatus{nil,
		{ID: "p", Revision: rev, InputsDigest: in, HasChanges: true},
		{ID: "p", Revision: rev, InputsDigest: in},
		{ID: "d", Revision: rev, InputsDigest: in, HasChanges: true, Mode: magosv1.PlanModeDestroy},
		{ID: "d", Revision: rev, InputsDigest: in, Mode: magosv1.PlanModeDestroy},
		{ID: "t", Revision: rev, InputsDigest: in, HasChanges: true, Request: &magosv1.PlanRequest{ID: "r1", Targets: []string{"a.b"}}},
		// Applied for an earlier revision: the next may carry it over.
		{ID: "p", Revision: "earlier", InputsDigest: in, HasChanges: true, ContentDigest: "c"}}
	modes := []magosv1.WorkspaceMode{"", magosv1.ModeApply, magosv1.ModePlanOnly, magosv1.ModeDestroy}
	requests := []*magosv1.PlanRequest{nil, {ID: "r1", Targets: []string{"a.b"}}, {ID: "r2", Replace: []string{"a.c"}}}
	applied := []*magosv1.AppliedStatus{nil, {PlanID: "p", Revision: rev}, {PlanID: "d", Revision: rev}}
	gates := []GateVerdict{{Outcome: GatePassed}, {Outcome: GateBlocked, Reason: magosv1.ReasonPolicyViolation}, {Outcome: GateErrored, Reason: magosv1.ReasonPolicyError}, {Outcome: GateStalePlan}}
	lasts := []*magosv1.RunStatus{nil}
	for _, reason := range []string{"", magosv1.ReasonRunFailed, magosv1.ReasonEngineNotFound, magosv1.ReasonArtifactRejected, magosv1.ReasonPathNotFound, magosv1.ReasonStateNotSaved, magosv1.ReasonJobMissing} {
		lasts = append(lasts, &magosv1.RunStatus{Phase: magosv1.RunPlan, Result: magosv1.ResultFailed, Reason: reason, Revision: rev, InputsDigest: in, Finished: &metav1.Time{Time: now}})
	}
	type chooser struct {
		approval magosv1.ApprovalMode
		separate bool
		deciders *Deciders
	}
	var choosers []chooser
	for _, approval := range []magosv1.ApprovalMode{magosv1.ApprovalAuto, magosv1.ApprovalManual} {
		for _, separate := range []bool{false, true} {
			for _, d := range []*Deciders{nil, {}, {Policies: "policy p"}, {Rollout: "r"}} {
				choosers = append(choosers, chooser{approval, separate, d})
			}
		}
	}
	for _, p := range plans {
		for _, g := range gates {
			for _, c := range choosers {
				for _, last := range lasts {
					for _, deleting := range []bool{false, true} {
						for _, mode := range modes {
							for _, rq := range requests {
								for _, a := range applied {
									for _, content := range contentsFor(p, rev) {
										f := Facts{Now: now, Revision: rev, Inputs: in, Plan: p, Gate: g, LastRun: last,
											Mode: mode, Applied: a, Interval: time.Minute, Requested: rq != nil && rq.ID == "r2", Content: content}
										if last != nil {
											f.Retry = nextRetry(nil, nil, last, RetryPolicy{Interval: time.Minute})
										}
										f.Approval, f.SeparatePlans, f.Deciders = c.approval, c.separate, c.deciders
										if deleting {
											f.Deletion = &DeletionFacts{}
										} else {
											f.Request = rq
										}
										d := decideAnswering(t, f)
										checkConsistent(t, f, d)
										f.Held = &HeldRun{After: time.Minute, Priority: "normal", Bound: "a bound"}
										checkHeld(t, d, decideAnswering(t, f))
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// contentsFor are the Content facts a plan p meets: none for a plan of
// this revision, else none asked yet, the same files, or others.
func contentsFor(p *magosv1.PlanStatus, rev string) []*ContentCheck {
	if p == nil || p.Revision == rev {
		return []*ContentCheck{nil}
	}
	return []*ContentCheck{nil, {Digest: p.ContentDigest}, {Digest: "other"}}
}

// checkConsistent asserts what must hold for decision d on facts f
// (TestDecisionsAreConsistent).
func checkConsistent(t *testing.T, f Facts, d Decision) {
	t.Helper()
	if d.Stalled {
		assert.Equal(t, magosv1.PhaseFailed, d.Phase, "%+v", d)
		assert.Equal(t, ActNone, d.Action, "a stalled decision does nothing: %+v", d)
	}
	if d.Phase == magosv1.PhaseFailed && !d.Stalled {
		assert.Equal(t, ActWait, d.Action, "a retried failure waits: %+v", d)
		assert.False(t, stalls(d.Reason), "a retried failure's reason is not a stalling one: %+v", d)
	}
	if d.Action == ActCarryRevision {
		assert.True(t, f.Content != nil && f.Content.Digest != "" && f.Content.Digest == f.Plan.ContentDigest,
			"only a revision that changes nothing read carries a plan: %+v (facts %+v)", d, f)
		assert.True(t, f.Deletion == nil && f.Request == nil && !f.Requested && f.Plan.InputsDigest == f.Inputs,
			"only a plan of the same inputs carries, and no request is set aside: %+v (facts %+v)", d, f)
	}
	if f.Content != nil && f.Content.Refused != "" && f.Deletion == nil {
		assert.False(t, d.Action == ActStart && magosv1.RunPlans(d.Run.Phase), "no plan starts on a refused configuration: %+v", d)
	}
	if f.Deletion != nil || d.Action != ActStart {
		return
	}
	switch {
	case f.Mode == magosv1.ModePlanOnly:
		assert.Equal(t, magosv1.RunPlan, d.Run.Phase, "a plan-only Workspace starts only plans: %+v", d)
		assert.NotEqual(t, magosv1.PhaseApplying, d.Phase, "%+v", d)
	case f.Mode == magosv1.ModeDestroy:
		assert.Equal(t, magosv1.PlanModeDestroy, d.Run.Mode, "mode Destroy plans and applies destroys only: %+v", d)
	case d.Run.Phase == magosv1.RunPlan:
		assert.Empty(t, d.Run.Mode, "mode Apply plans normally: %+v", d)
	}
	if magosv1.RunPlans(d.Run.Phase) {
		assert.Equal(t, f.Request, d.Run.Request, "a plan carries the pending plan request: %+v", d)
		nothingDecides := f.Approval != magosv1.ApprovalManual && !f.SeparatePlans && f.Deciders != nil &&
			f.Deciders.Policies == "" && f.Deciders.Rollout == "" && !f.Request.Scoped() && (f.Mode == "" || f.Mode == magosv1.ModeApply)
		assert.Equal(t, nothingDecides, d.Run.Phase == magosv1.RunPlanApply,
			"a plan takes the fast path exactly where nothing decides on it: %+v (facts %+v)", d, f)
	}
	if d.Run.Phase == magosv1.RunPlanApply {
		assert.Empty(t, d.Run.Mode, "the fast path never destroys: %+v", d)
		assert.Equal(t, magosv1.PhaseApplying, d.Phase, "%+v", d)
	}
	if d.Run.Phase == magosv1.RunApply {
		assert.Equal(t, f.Plan.ID, d.Run.PlanID, "an apply applies the plan in status: %+v", d)
		assert.True(t, f.PlanCurrent(), "an apply applies only the current plan: %+v", d)
	}
}

// checkHeld asserts that the run queue's hold changes only a decision
// that starts a run, into one that waits without a Job
// (TestDecisionsAreConsistent).
func checkHeld(t *testing.T, free, held Decision) {
	t.Helper()
	if free.Action != ActStart {
		assert.Equal(t, free, held, "a hold changes nothing that starts no run")
		return
	}
	assert.Equal(t, ActWait, held.Action, "a held run waits: %+v", held)
	assert.True(t, held.Queued, "%+v", held)
	assert.False(t, held.Stalled, "%+v", held)
	assert.False(t, held.HandlesRequest, "a held run handles no request yet: %+v", held)
}
