package decide

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/plansummary"
)

// TestFold pins how a run that ended becomes status (fold's doc comment):
// for each run and what the controller found, the run recorded in
// history, the plan, the apply, the retry state, the events in order and
// the metrics.
func TestFold(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: now.Add(d)} }
	const rev, in = "main@sha1:b", "sha256:in"
	run := func(phase string, mut ...func(*magosv1.RunStatus)) *magosv1.RunStatus {
		cr := &magosv1.RunStatus{Job: "ws-" + phase + "-3", Phase: phase, PlanID: "p3", Revision: rev, InputsDigest: in, Started: at(-30 * time.Second)}
		for _, m := range mut {
			m(cr)
		}
		return cr
	}
	drift := func(cr *magosv1.RunStatus) { cr.Drift = true }
	destroy := func(cr *magosv1.RunStatus) { cr.Mode = magosv1.PlanModeDestroy }
	scoped := func(cr *magosv1.RunStatus) {
		cr.Request = &magosv1.PlanRequest{ID: "r1", Replace: []string{"terraform_data.web"}}
	}
	// The runner's report claims its own plan ID and counts: neither is
	// believed (the runner ran config code).
	ok := func(phase string) magosv1.RunResult {
		return magosv1.RunResult{Phase: phase, Result: magosv1.ResultSucceeded, PlanID: "forged", PlanDigest: "sha256:plan", Add: 9, HasChanges: true,
			Outputs: []string{"url"}, ChangedOutputs: []string{"url"}, Steps: &magosv1.RunSteps{Engine: 2}}
	}
	failed := func(phase, reason string) magosv1.RunResult {
		return magosv1.RunResult{Phase: phase, Result: magosv1.ResultFailed, Reason: reason, Message: "boom", LockHolder: "reported"}
	}
	sealed := &SealedPlan{BundleDigest: "sha256:bundle", Summary: plansummary.Summary{Counts: plansummary.Counts{Add: 1, Change: 2}, HasChanges: true}}
	noChanges := &SealedPlan{BundleDigest: "sha256:bundle"}
	unreadable := &SealedPlan{Err: errors.New("chunk 1 is missing")}
	oldPlan := &magosv1.PlanStatus{ID: "p2", Revision: rev, HasChanges: true}
	lease := &magosv1.LockStatus{Holder: "run-2", Lease: "lock-tfstate-default-ws"}
	policyPassed := metav1.Condition{Type: magosv1.PolicyPassedCondition, Status: metav1.ConditionTrue, Reason: magosv1.ReasonPolicyPassed, Message: "No policy selects this Workspace"}
	retry := RetryPolicy{Interval: time.Minute}

	type want struct {
		result, reason, message string
		plan                    *magosv1.PlanStatus // nil: no plan in status
		applied                 string              // lastApplied's plan ID ("": none)
		outputs                 []string
		erroredState            *magosv1.ErroredStateStatus
		lock                    *magosv1.LockStatus
		retry                   *magosv1.RetryStatus
		events                  []string // "Reason: message fragment", in order
		metrics                 RunMetrics
	}
	tests := []struct {
		name   string
		status magosv1.WorkspaceStatus
		end    RunEnd
		want   want
	}{
		// A plan that succeeded.
		{name: "a plan becomes status.plan with the controller's ID and the stored plan's counts",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlan), Plan: oldPlan},
			end:    RunEnd{Result: ok(magosv1.RunPlan), Seal: sealed},
			want: want{result: magosv1.ResultSucceeded,
				plan:    &magosv1.PlanStatus{ID: "p3", Revision: rev, InputsDigest: in, Digest: "sha256:plan", BundleDigest: "sha256:bundle", Add: 1, Change: 2, HasChanges: true},
				events:  []string{magosv1.ReasonPlanned + ": Plan p3 of revision " + rev + ": +1 ~2 -0"},
				metrics: RunMetrics{Phase: magosv1.RunPlan, Result: magosv1.ResultSucceeded, Timed: true, Seconds: 30, Steps: &magosv1.RunSteps{Engine: 2}}}},
		{name: "a drift check with changes is DriftDetected",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlan, drift)},
			end:    RunEnd{Result: ok(magosv1.RunPlan), Seal: sealed},
			want: want{result: magosv1.ResultSucceeded,
				plan:    &magosv1.PlanStatus{ID: "p3", Revision: rev, InputsDigest: in, Digest: "sha256:plan", BundleDigest: "sha256:bundle", Add: 1, Change: 2, HasChanges: true, Drift: true},
				events:  []string{magosv1.ReasonDriftDetected + ": Drift check p3 found changes made outside Magos"},
				metrics: RunMetrics{Phase: magosv1.RunPlan, Result: magosv1.ResultSucceeded, Timed: true, Seconds: 30, Steps: &magosv1.RunSteps{Engine: 2}, Drift: true}}},
		{name: "a destroy plan is DestroyPlanned",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlan, destroy)},
			end:    RunEnd{Result: ok(magosv1.RunPlan), Seal: sealed},
			want: want{result: magosv1.ResultSucceeded,
				plan:   &magosv1.PlanStatus{ID: "p3", Revision: rev, InputsDigest: in, Digest: "sha256:plan", BundleDigest: "sha256:bundle", Add: 1, Change: 2, HasChanges: true, Mode: magosv1.PlanModeDestroy},
				events: []string{magosv1.ReasonDestroyPlanned + ": Destroy plan p3 of revision " + rev}}},
		{name: "a plan for a scoped request names the request and handles it",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlan, scoped)},
			end:    RunEnd{Result: ok(magosv1.RunPlan), Seal: sealed},
			want: want{result: magosv1.ResultSucceeded,
				plan: &magosv1.PlanStatus{ID: "p3", Revision: rev, InputsDigest: in, Digest: "sha256:plan", BundleDigest: "sha256:bundle", Add: 1, Change: 2, HasChanges: true,
					Request: &magosv1.PlanRequest{ID: "r1", Replace: []string{"terraform_data.web"}}},
				events: []string{magosv1.ReasonPlanned + ": Plan p3 of revision " + rev + " for request r1 (-replace terraform_data.web): +1 ~2 -0"}}},
		{name: "a plan whose stored plan cannot be read back failed: PlanCorrupt, retried, the lock recorded",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlan), Plan: oldPlan},
			end:    RunEnd{Result: ok(magosv1.RunPlan), Seal: unreadable, Lock: lease, Retry: retry},
			want: want{result: magosv1.ResultFailed, reason: magosv1.ReasonPlanCorrupt, message: "chunk 1 is missing", plan: oldPlan, lock: lease,
				retry:  &magosv1.RetryStatus{Attempts: 1, NextTime: at(time.Minute)},
				events: []string{magosv1.ReasonRunFailed + ": The plan run ws-plan-3 failed: chunk 1 is missing"},
				metrics: RunMetrics{Phase: magosv1.RunPlan, Result: magosv1.ResultFailed, Timed: true, Seconds: 30, Steps: &magosv1.RunSteps{Engine: 2},
					Failed: true, Failure: magosv1.ReasonPlanCorrupt, RetryOutcome: RetryScheduled}}},
		{name: "a plan identity not revoked is a warning before the plan's event",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlan)},
			end:    RunEnd{Name: "ws", Result: ok(magosv1.RunPlan), Seal: sealed, RevokeErr: errors.New("forbidden")},
			want: want{result: magosv1.ResultSucceeded,
				plan: &magosv1.PlanStatus{ID: "p3", Revision: rev, InputsDigest: in, Digest: "sha256:plan", BundleDigest: "sha256:bundle", Add: 1, Change: 2, HasChanges: true},
				events: []string{magosv1.ReasonPlanIdentityNotRevoked + ": The plan identity " + magosv1.PlanRunnerServiceAccountName("ws") + " of finished plan p3 was not revoked",
					magosv1.ReasonPlanned + ": Plan p3"}}},

		// A fast run that succeeded.
		{name: "a fast run is its plan, applied without a gate, and its apply",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlanApply), Conditions: []metav1.Condition{policyPassed}},
			end:    RunEnd{Result: ok(magosv1.RunPlanApply), Seal: noChanges},
			want: want{result: magosv1.ResultSucceeded, applied: "p3", outputs: []string{"url"},
				plan: &magosv1.PlanStatus{ID: "p3", Revision: rev, InputsDigest: in, Digest: "sha256:plan", BundleDigest: "sha256:bundle", Add: 9, HasChanges: true,
					AppliedWithoutGate: true, Policy: &magosv1.PolicyVerdict{Passed: true, Message: "No policy selects this Workspace"}},
				events: []string{magosv1.ReasonApplied + ": Planned and applied plan p3 of revision " + rev + " in one run (+9 ~0 -0; no decision rests on it)"}}},
		{name: "a fast run without changes applies nothing and keeps the outputs",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlanApply), Outputs: []string{"old"}},
			end:    RunEnd{Result: magosv1.RunResult{Phase: magosv1.RunPlanApply, Result: magosv1.ResultSucceeded, PlanDigest: "sha256:plan"}, Seal: noChanges},
			want: want{result: magosv1.ResultSucceeded, applied: "p3", outputs: []string{"old"},
				plan: &magosv1.PlanStatus{ID: "p3", Revision: rev, InputsDigest: in, Digest: "sha256:plan", BundleDigest: "sha256:bundle", AppliedWithoutGate: true,
					Policy: &magosv1.PolicyVerdict{Passed: true, Message: "No policy selected this Workspace when the run started: applied without a gate"}},
				events: []string{magosv1.ReasonNoChanges + ": Plan p3 of revision " + rev + " has no changes"}}},
		{name: "a fast drift run applies over the drift, a warning",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlanApply, drift)},
			end:    RunEnd{Result: ok(magosv1.RunPlanApply), Seal: noChanges},
			want: want{result: magosv1.ResultSucceeded, applied: "p3", outputs: []string{"url"},
				plan: &magosv1.PlanStatus{ID: "p3", Revision: rev, InputsDigest: in, Digest: "sha256:plan", BundleDigest: "sha256:bundle", Add: 9, HasChanges: true, Drift: true,
					AppliedWithoutGate: true, Policy: &magosv1.PolicyVerdict{Passed: true, Message: "No policy selected this Workspace when the run started: applied without a gate"}},
				events:  []string{magosv1.ReasonDriftDetected + ": Drift check p3 found changes made outside Magos (+9 ~0 -0) and applied the configuration over them"},
				metrics: RunMetrics{Phase: magosv1.RunPlanApply, Result: magosv1.ResultSucceeded, Timed: true, Seconds: 30, Steps: &magosv1.RunSteps{Engine: 2}, Drift: true}}},
		{name: "a fast run whose stored plan cannot be read back is still applied; only its record is lost",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlanApply)},
			end:    RunEnd{Result: ok(magosv1.RunPlanApply), Seal: unreadable},
			want: want{result: magosv1.ResultSucceeded, applied: "p3", outputs: []string{"url"},
				plan: &magosv1.PlanStatus{ID: "p3", Revision: rev, InputsDigest: in, Digest: "sha256:plan", Add: 9, HasChanges: true,
					AppliedWithoutGate: true, Policy: &magosv1.PolicyVerdict{Passed: true, Message: "No policy selected this Workspace when the run started: applied without a gate"}},
				events: []string{magosv1.ReasonPlanNotRecorded + ": Run ws-plan-apply-3 applied its plan, but the stored plan cannot be shown: chunk 1 is missing",
					magosv1.ReasonApplied + ": Planned and applied plan p3"}}},

		// An apply that succeeded.
		{name: "an apply is status.lastApplied with its outputs",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunApply), Plan: oldPlan},
			end:    RunEnd{Result: ok(magosv1.RunApply)},
			want:   want{result: magosv1.ResultSucceeded, plan: oldPlan, applied: "p3", outputs: []string{"url"}, events: []string{magosv1.ReasonApplied + ": Applied plan p3 of revision " + rev}}},
		{name: "a destroy apply clears the outputs",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunApply, destroy), Plan: oldPlan, Outputs: []string{"url"}},
			end:    RunEnd{Result: ok(magosv1.RunApply)},
			want:   want{result: magosv1.ResultSucceeded, plan: oldPlan, applied: "p3", events: []string{magosv1.ReasonDestroyed + ": Applied destroy plan p3"}}},
		{name: "a destroy run without a plan is Destroyed",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunDestroy)},
			end:    RunEnd{Result: ok(magosv1.RunDestroy)},
			want:   want{result: magosv1.ResultSucceeded, events: []string{magosv1.ReasonDestroyed + ": Destroyed the resources of revision " + rev}}},

		// A plan that ran out of plan Secrets.
		{name: "more plan Secrets than the cluster allows: the run failed",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlan), Plan: oldPlan},
			end: RunEnd{Result: magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultStale, Reason: magosv1.ReasonPlanStorageExhausted, PlanChunks: 20},
				MaxPlanChunks: 8, Retry: retry},
			want: want{result: magosv1.ResultFailed, reason: magosv1.ReasonPlanStorageLimitExceeded, message: "the plan needs 20 plan Secrets (about 15 MiB stored); this cluster allows 8",
				retry:  &magosv1.RetryStatus{Attempts: 1, NextTime: at(time.Minute)},
				events: []string{magosv1.ReasonPlanStorageLimitExceeded + ": The plan run ws-plan-3 failed: the plan needs 20"}}},
		{name: "plan Secrets reserved: plan again",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlan), Plan: oldPlan},
			end: RunEnd{Result: magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultStale, Reason: magosv1.ReasonPlanStorageExhausted, PlanChunks: 3},
				MaxPlanChunks: 8, Reserved: &ChunkReservation{Created: 2}},
			want: want{result: magosv1.ResultStale, reason: magosv1.ReasonPlanStorageExhausted,
				events: []string{magosv1.ReasonPlanStorageExhausted + ": Plan p3 needs 3 plan Secrets; reserved them, planning again"}}},
		{name: "plan Secrets all there already: the run failed instead of looping",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlan)},
			end: RunEnd{Result: magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultStale, Reason: magosv1.ReasonPlanStorageExhausted, Message: "needs 3", PlanChunks: 3},
				MaxPlanChunks: 8, Reserved: &ChunkReservation{}, Retry: retry},
			want: want{result: magosv1.ResultFailed, reason: magosv1.ReasonPlanStorageExhausted, message: "needs 3",
				retry:  &magosv1.RetryStatus{Attempts: 1, NextTime: at(time.Minute)},
				events: []string{magosv1.ReasonRunFailed + ": The plan run ws-plan-3 failed: needs 3"}}},
		{name: "reserving plan Secrets failed: no event, the next plan tries again",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlan)},
			end: RunEnd{Result: magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultStale, Reason: magosv1.ReasonPlanStorageExhausted, PlanChunks: 3},
				MaxPlanChunks: 8, Reserved: &ChunkReservation{Err: errors.New("quota")}},
			want: want{result: magosv1.ResultStale, reason: magosv1.ReasonPlanStorageExhausted}},

		// Stale plans and failures.
		{name: "a stale plan is dropped and made again",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunApply), Plan: oldPlan},
			end:    RunEnd{Result: magosv1.RunResult{Phase: magosv1.RunApply, Result: magosv1.ResultStale, Message: "state moved"}},
			want:   want{result: magosv1.ResultStale, message: "state moved", events: []string{magosv1.ReasonPlanStale + ": Plan p3 is stale (state moved); re-planning"}}},
		{name: "state not saved: the controller names the Secret, not the runner",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunApply), Plan: oldPlan},
			end: RunEnd{Name: "ws", Result: magosv1.RunResult{Phase: magosv1.RunApply, Result: magosv1.ResultFailed, Reason: magosv1.ReasonStateNotSaved, Message: "etcd full", ErroredState: "someone-elses"},
				Failure: magosv1.ReasonStateNotSaved, Retry: retry},
			want: want{result: magosv1.ResultFailed, reason: magosv1.ReasonStateNotSaved, message: "etcd full",
				erroredState: &magosv1.ErroredStateStatus{Job: "ws-apply-3", Secret: magosv1.ErroredStateSecretName("ws"), StateSecret: magosv1.StateSecretName("ws"), Since: at(0)},
				retry:        &magosv1.RetryStatus{Attempts: 1}, // stalls
				events:       []string{magosv1.ReasonStateNotSaved + ": The apply run ws-apply-3 could not write its state back: etcd full"}}},
		{name: "a failed apply drops the plan (the state may have moved) and records the lock holder",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunApply), Plan: oldPlan},
			end:    RunEnd{Result: failed(magosv1.RunApply, magosv1.ReasonRunFailed), Failure: magosv1.ReasonRunFailed, Lock: lease, Retry: retry},
			want: want{result: magosv1.ResultFailed, reason: magosv1.ReasonRunFailed, message: "boom", lock: lease,
				retry:   &magosv1.RetryStatus{Attempts: 1, NextTime: at(time.Minute)},
				events:  []string{magosv1.ReasonRunFailed + ": The apply run ws-apply-3 failed: boom"},
				metrics: RunMetrics{Phase: magosv1.RunApply, Result: magosv1.ResultFailed, Timed: true, Seconds: 30, Failed: true, Failure: magosv1.ReasonRunFailed, RetryOutcome: RetryScheduled}}},
		{name: "a failed fast run drops the plan (the state may have moved)",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlanApply), Plan: oldPlan},
			end:    RunEnd{Result: failed(magosv1.RunPlanApply, magosv1.ReasonApplyFailed), Failure: magosv1.ReasonApplyFailed, Retry: retry},
			want: want{result: magosv1.ResultFailed, reason: magosv1.ReasonApplyFailed, message: "boom",
				retry:  &magosv1.RetryStatus{Attempts: 1, NextTime: at(time.Minute)},
				events: []string{magosv1.ReasonRunFailed + ": The plan and apply run ws-plan-apply-3 failed: boom"}}},
		{name: "a failed plan keeps the plan it did not replace",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlan), Plan: oldPlan},
			end:    RunEnd{Result: failed(magosv1.RunPlan, magosv1.ReasonRunFailed), Failure: magosv1.ReasonRunFailed, Retry: retry},
			want: want{result: magosv1.ResultFailed, reason: magosv1.ReasonRunFailed, message: "boom", plan: oldPlan,
				retry:  &magosv1.RetryStatus{Attempts: 1, NextTime: at(time.Minute)},
				events: []string{magosv1.ReasonRunFailed + ": The plan run ws-plan-3 failed: boom"}}},
		{name: "a second failure for the same revision and inputs backs off",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlan), Retry: &magosv1.RetryStatus{Attempts: 1},
				History: []magosv1.RunStatus{{Phase: magosv1.RunPlan, Result: magosv1.ResultFailed, Revision: rev, InputsDigest: in}}},
			end: RunEnd{Result: failed(magosv1.RunPlan, magosv1.ReasonRunFailed), Failure: magosv1.ReasonRunFailed, Retry: retry},
			want: want{result: magosv1.ResultFailed, reason: magosv1.ReasonRunFailed, message: "boom",
				retry:  &magosv1.RetryStatus{Attempts: 2, NextTime: at(2 * time.Minute)},
				events: []string{magosv1.ReasonRunFailed + ": The plan run ws-plan-3 failed"}}},
		{name: "a state found locked records the lease's holder, counted as a failure",
			status: magosv1.WorkspaceStatus{CurrentRun: run(magosv1.RunPlan)},
			end:    RunEnd{Result: magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultLocked, Message: "locked"}, Failure: magosv1.ReasonStateLocked, Lock: lease},
			want: want{result: magosv1.ResultLocked, message: "locked", lock: lease,
				events:  []string{magosv1.ReasonRunFailed + ": The plan run ws-plan-3 failed: locked"},
				metrics: RunMetrics{Phase: magosv1.RunPlan, Result: magosv1.ResultLocked, Timed: true, Seconds: 30, Failed: true, Failure: magosv1.ReasonStateLocked}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.end.Now = now
			if tt.end.MaxPlanChunks == 0 {
				tt.end.MaxPlanChunks = 8
			}
			before := tt.status.DeepCopy()
			got, out := Fold(tt.status, tt.end)
			assert.Equal(t, before, &tt.status, "fold changed the status it was given")

			require.Nil(t, got.CurrentRun, "the run is no longer current")
			require.NotEmpty(t, got.History)
			h := got.History[0]
			assert.Equal(t, tt.status.CurrentRun.Job, h.Job, "the run heads the history")
			assert.Equal(t, at(0), h.Finished)
			assert.Equal(t, tt.want.result, h.Result)
			assert.Equal(t, tt.want.reason, h.Reason)
			assert.Contains(t, h.Message, tt.want.message)
			assert.Len(t, got.History, len(tt.status.History)+1)

			if tt.want.plan == nil {
				assert.Nil(t, got.Plan, "plan")
			} else if assert.NotNil(t, got.Plan, "plan") {
				p := *got.Plan
				if p.Time != nil && tt.want.plan.Time == nil {
					assert.Equal(t, at(0), p.Time)
					p.Time = nil
				}
				assert.Equal(t, *tt.want.plan, p, "plan")
			}
			applied := ""
			if got.LastApplied != nil {
				applied = got.LastApplied.PlanID
			}
			assert.Equal(t, tt.want.applied, applied, "lastApplied")
			if tt.want.outputs == nil {
				assert.Empty(t, got.Outputs, "outputs")
			} else {
				assert.Equal(t, tt.want.outputs, got.Outputs, "outputs")
			}
			assert.Equal(t, tt.want.erroredState, got.ErroredState, "erroredState")
			assert.Equal(t, tt.want.lock, got.Lock, "lock")
			assert.Equal(t, tt.want.retry, got.Retry, "retry")

			require.Len(t, out.Notes, len(tt.want.events), "events: %+v", out.Notes)
			for i, e := range tt.want.events {
				assert.Contains(t, out.Notes[i].Reason+": "+out.Notes[i].Message, e)
			}
			if tt.want.metrics.Phase != "" {
				assert.Equal(t, tt.want.metrics, out.Metrics)
			}
		})
	}
}

// TestFoldKeepsTheHistoryBounded: the newest runs are kept, up to
// RunHistoryLimit.
func TestFoldKeepsTheHistoryBounded(t *testing.T) {
	st := magosv1.WorkspaceStatus{CurrentRun: &magosv1.RunStatus{Job: "ws-plan-new", Phase: magosv1.RunPlan}}
	for i := range magosv1.RunHistoryLimit {
		st.History = append(st.History, magosv1.RunStatus{Job: "old-" + string(rune('a'+i))})
	}
	got, _ := Fold(st, RunEnd{Result: magosv1.RunResult{Result: magosv1.ResultFailed}})
	assert.Len(t, got.History, magosv1.RunHistoryLimit)
	assert.Equal(t, "ws-plan-new", got.History[0].Job)
	assert.Equal(t, "old-a", got.History[1].Job)
}
