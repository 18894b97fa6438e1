package decide

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestApplyStatusOnly pins the status each status-only action leaves, the
// facts derived again from it (what the next Decide sees), and its event.
func TestApplyStatusOnly(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	plan := func() *magosv1.PlanStatus {
		return &magosv1.PlanStatus{ID: "p1", Revision: "main@sha1:aaa", HasChanges: false}
	}
	base := func() magosv1.WorkspaceStatus {
		return magosv1.WorkspaceStatus{
			Plan:         plan(),
			Lock:         &magosv1.LockStatus{Lease: "app-lock", Holder: "run-7"},
			Retry:        &magosv1.RetryStatus{Attempts: 2},
			ErroredState: &magosv1.ErroredStateStatus{Job: "app-apply-7", StateSecret: "app-errored-7"},
			Runs:         7,
		}
	}
	for _, tt := range []struct {
		name   string
		d      Decision
		want   func(st *magosv1.WorkspaceStatus)
		facts  func(f *Facts)
		notes  []Note
		before func(st *magosv1.WorkspaceStatus)
	}{{
		name: "a plan without changes is recorded as applied",
		d:    Decision{Action: ActRecordNoChanges},
		want: func(st *magosv1.WorkspaceStatus) {
			st.LastApplied = &magosv1.AppliedStatus{PlanID: "p1", Revision: "main@sha1:aaa", Time: metav1.NewTime(now)}
		},
		notes: []Note{{Normal, magosv1.ReasonNoChanges, "Plan p1 of revision main@sha1:aaa has no changes; nothing to apply"}},
	}, {
		name: "the plan is carried to a revision that changes nothing it reads, and so is its apply",
		d:    Decision{Action: ActCarryRevision, Message: "Revision main@sha1:bbb changes nothing the Workspace reads"},
		before: func(st *magosv1.WorkspaceStatus) {
			st.LastApplied = &magosv1.AppliedStatus{PlanID: "p1", Revision: "main@sha1:aaa"}
		},
		want: func(st *magosv1.WorkspaceStatus) {
			st.Plan.PlannedRevision, st.Plan.Revision = "main@sha1:aaa", "main@sha1:bbb"
			st.LastApplied = &magosv1.AppliedStatus{PlanID: "p1", Revision: "main@sha1:bbb"}
		},
		notes: []Note{{Normal, magosv1.ReasonRevisionUnchanged, "Revision main@sha1:bbb changes nothing the Workspace reads"}},
	}, {
		name: "an unlock clears the lock, the plan and the retries",
		d:    Decision{Action: ActReleaseLock},
		want: func(st *magosv1.WorkspaceStatus) {
			st.Lock, st.Plan, st.Retry = nil, nil, nil
		},
		facts: func(f *Facts) { f.Unlock = nil },
		notes: []Note{{Normal, magosv1.ReasonUnlocked, `Released the state lock held by "run-7"`}},
	}, {
		name: "restored state clears the errored state, the plan and the retries",
		d:    Decision{Action: ActClearErroredState},
		want: func(st *magosv1.WorkspaceStatus) {
			st.ErroredState, st.Plan, st.Retry = nil, nil, nil
		},
		facts: func(f *Facts) { f.StateRestored = false },
		notes: []Note{{Normal, magosv1.ReasonStateRestored, "The state of run app-apply-7 was marked restored; planning again"}},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			st := base()
			if tt.before != nil {
				tt.before(&st)
			}
			f := Facts{Now: now, Revision: "main@sha1:bbb", Plan: st.Plan, Applied: st.LastApplied, Lock: st.Lock, Retry: st.Retry,
				ErroredState: st.ErroredState, Unlock: &UnlockCheck{}, StateRestored: true}
			want := base()
			if tt.before != nil {
				tt.before(&want)
			}
			tt.want(&want)
			wantFacts := f
			wantFacts.Plan, wantFacts.Applied, wantFacts.Lock, wantFacts.Retry, wantFacts.ErroredState = want.Plan, want.LastApplied, want.Lock, want.Retry, want.ErroredState
			if tt.facts != nil {
				tt.facts(&wantFacts)
			}
			assert.True(t, StatusOnly(tt.d))

			got, notes := ApplyStatusOnly(&st, f, tt.d)

			assert.Equal(t, want, st)
			assert.Equal(t, wantFacts, got)
			assert.Equal(t, tt.notes, notes)
		})
	}
	for _, a := range []action{ActNone, ActWait, ActStart, ActFinishDeletion} {
		assert.False(t, StatusOnly(Decision{Action: a}), "action %d acts outside status", a)
	}
}

// TestStarted: a started run is the current one, counted; a Workspace
// that asked past the cluster's bounds is told, once per start.
func TestStarted(t *testing.T) {
	st := magosv1.WorkspaceStatus{Runs: 4}
	run := &magosv1.RunStatus{Job: "app-plan-5", Phase: magosv1.RunPlan, Result: magosv1.ResultRunning}
	notes := Started(&st, 5, run, StartCaps{AskedInterval: time.Minute, Interval: 5 * time.Minute, AskedTimeout: 3 * time.Hour, Timeout: time.Hour})
	assert.Equal(t, magosv1.WorkspaceStatus{Runs: 5, CurrentRun: run}, st)
	assert.Equal(t, []Note{
		{Warning, magosv1.ReasonIntervalRaised, "spec.interval 1m0s is shorter than this cluster's minimum: drift re-plans come every 5m0s (--min-interval)"},
		{Warning, magosv1.ReasonRunTimeoutCapped, TimeoutCappedMessage(3*time.Hour, time.Hour) + ": run app-plan-5 has a deadline of 1h0m0s"},
	}, notes)
	assert.Empty(t, Started(&st, 6, run, StartCaps{Interval: 5 * time.Minute, Timeout: time.Hour}))
}

// TestObserve: the inputs digest is always recorded; the source only once
// there is an artifact.
func TestObserve(t *testing.T) {
	src := &magosv1.SourceStatus{URL: "http://source/a.tar.gz", Revision: "main@sha1:aaa", Digest: "sha256:1"}
	st := magosv1.WorkspaceStatus{Source: src}
	Observe(&st, "sha256:in2", nil)
	assert.Equal(t, magosv1.WorkspaceStatus{Source: src, InputsDigest: "sha256:in2"}, st)
	next := &magosv1.SourceStatus{URL: "http://source/b.tar.gz", Revision: "main@sha1:bbb", Digest: "sha256:2"}
	Observe(&st, "sha256:in3", next)
	assert.Equal(t, magosv1.WorkspaceStatus{Source: next, InputsDigest: "sha256:in3"}, st)
}

// TestTransitionNotes: a decision's event is recorded when the Workspace
// enters it (its phase or Ready reason changes), not again while it stays.
func TestTransitionNotes(t *testing.T) {
	ws := func(phase magosv1.WorkspacePhase, reason string) *magosv1.Workspace {
		w := &magosv1.Workspace{}
		w.Status.Phase = phase
		w.Status.Conditions = []metav1.Condition{{Type: magosv1.ReadyCondition, Status: metav1.ConditionFalse, Reason: reason}}
		return w
	}
	event := &Note{Normal, magosv1.ReasonPlanned, "Plan p1 is ready"}
	d := Decision{Event: event}
	assert.Equal(t, []Note{*event}, TransitionNotes(ws(magosv1.PhasePlanning, "Planning"), ws(magosv1.PhaseAwaitingApproval, "AwaitingApproval"), d))
	assert.Equal(t, []Note{*event}, TransitionNotes(ws(magosv1.PhaseFailed, "PolicyError"), ws(magosv1.PhaseFailed, "PolicyViolation"), d), "a new Ready reason")
	assert.Empty(t, TransitionNotes(ws(magosv1.PhaseFailed, "PolicyViolation"), ws(magosv1.PhaseFailed, "PolicyViolation"), d), "staying")
	assert.Empty(t, TransitionNotes(ws(magosv1.PhasePlanning, "Planning"), ws(magosv1.PhaseIdle, "Applied"), Decision{}), "no event")

	auto := ws(magosv1.PhaseApplying, "Applying")
	auto.Status.Plan = &magosv1.PlanStatus{ID: "p2", AutoApproved: true, ApprovalRule: "small-changes"}
	notes := TransitionNotes(ws(magosv1.PhaseApplying, "Applying"), auto, d)
	assert.Len(t, notes, 1, "the approval rules' note; the decision's event only on entering")
	assert.Equal(t, magosv1.ReasonAutoApproved, notes[0].Reason)
}

// TestDeletionNotes: a deleted Workspace let go says whether its resources
// were destroyed or left in place with its state.
func TestDeletionNotes(t *testing.T) {
	assert.Equal(t, []Note{{Warning, magosv1.ReasonDestroySkipped,
		"Cannot destroy: source not ready; the Workspace is deleted, its resources and state Secret " + magosv1.StateSecretName("app") + " are left in place"}},
		DeletionNotes("app", Decision{Reason: magosv1.ReasonDestroySkipped, Message: "source not ready"}))
	assert.Equal(t, []Note{{Normal, magosv1.ReasonDestroyed, "Destroyed by run app-destroy-3"}},
		DeletionNotes("app", Decision{Reason: magosv1.ReasonDestroyed, Message: "Destroyed by run app-destroy-3"}))
	assert.Empty(t, DeletionNotes("app", Decision{}))
	assert.Equal(t, magosv1.ReasonDestroySkipped, PlanOnlyNotDestroyed("app").Reason)
}

// TestRecordUnlockCheck: a Lease held by another than status names
// updates the holder status shows; a check that found none changes
// nothing.
func TestRecordUnlockCheck(t *testing.T) {
	st := magosv1.WorkspaceStatus{Lock: &magosv1.LockStatus{Lease: "app-lock", Holder: "run-7"}}
	RecordUnlockCheck(&st, &UnlockCheck{})
	assert.Equal(t, "run-7", st.Lock.Holder)
	RecordUnlockCheck(&st, &UnlockCheck{Holder: "run-8"})
	assert.Equal(t, "run-8", st.Lock.Holder)
}
