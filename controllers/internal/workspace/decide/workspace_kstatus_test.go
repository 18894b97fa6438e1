package decide

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/kstatustest"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// TestWorkspaceKstatus: every phase of a Workspace reads right to kstatus,
// which Flux health checks, kubectl wait scripts and Argo CD rely on. A
// failing Workspace never reads as Current.
func TestWorkspaceKstatus(t *testing.T) {
	const rev = "main@sha1:a"
	plan := &magosv1.PlanStatus{ID: "p2", Revision: rev, HasChanges: true, Add: 1}
	applied := &magosv1.AppliedStatus{PlanID: "p1", Revision: rev}
	tests := []struct {
		name string
		obs  Observation
		want status.Status
		// waitsForPerson: suspended, awaiting approval or promotion.
		waitsForPerson bool
	}{
		{"applied and idle", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseIdle}}, status.CurrentStatus, false},
		{"planning", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhasePlanning, Reason: magosv1.ReasonPlanning}}, status.InProgressStatus, false},
		{"validating", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseValidating}}, status.InProgressStatus, false},
		{"applying", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseApplying, Reason: magosv1.ReasonApplying}}, status.InProgressStatus, false},
		{"destroying", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseDestroying, Reason: magosv1.ReasonDestroying}}, status.InProgressStatus, false},
		{"waiting for the source", Observation{Err: rerror.Wait(magosv1.ReasonSourceNotReady, "no artifact", 0)}, status.InProgressStatus, false},
		{"awaiting approval", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseAwaitingApproval, Reason: magosv1.ReasonAwaitingApproval, Message: "approve"}}, status.InProgressStatus, true},
		{"awaiting promotion", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseAwaitingPromotion, Reason: "AwaitingPromotion", Message: "promote"}}, status.InProgressStatus, true},
		{"suspended", Observation{Suspended: true}, status.InProgressStatus, true},
		{"run failed, retrying", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonRunFailed, Message: "retrying in 5m"}}, status.InProgressStatus, false},
		{"run failed without a reason, retrying", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed}}, status.InProgressStatus, false},
		{"runner exited without a report, retrying", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: "NoReport"}}, status.InProgressStatus, false},
		{"policy could not be evaluated, retrying", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonPolicyError}}, status.InProgressStatus, false},
		{"destroy failed, retrying", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonDestroyFailed}}, status.InProgressStatus, false},
		{"destroy awaiting approval", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseAwaitingApproval, Reason: magosv1.ReasonDestroyAwaitingApproval, Message: "approve the destroy"}}, status.InProgressStatus, true},
		{"policy violation stalls", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonPolicyViolation, Stalled: true}}, status.FailedStatus, false},
		{"engine not found stalls", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: "EngineNotFound", Stalled: true}}, status.FailedStatus, false},
		{"path not found stalls", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: "PathNotFound", Stalled: true}}, status.FailedStatus, false},
		{"artifact rejected stalls", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: "ArtifactRejected", Stalled: true}}, status.FailedStatus, false},
		{"artifact digest mismatch stalls", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: "ArtifactDigestMismatch", Stalled: true}}, status.FailedStatus, false},
		{"retries exhausted stall", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonRetriesExhausted, Stalled: true}}, status.FailedStatus, false},
		{"stuck state lock stalls", Observation{Revision: rev, Decision: Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonStateLocked, Stalled: true}}, status.FailedStatus, false},
		{"transient reconcile error", Observation{Err: rerror.Retry("RunnerIdentityFailed", errors.New("conflict"))}, status.InProgressStatus, false},
		{"untyped reconcile error", Observation{Err: errors.New("boom")}, status.InProgressStatus, false},
		{"invalid spec", Observation{Err: rerror.Stall(magosv1.InvalidSpecReason, errors.New("bad"))}, status.FailedStatus, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "ws", Namespace: "ns", Generation: 3}}
			ws.Status = magosv1.WorkspaceStatus{ObservedGeneration: 2, Plan: plan.DeepCopy(), LastApplied: applied.DeepCopy()}
			ComputeStatus(ws, tt.obs)
			got := kstatustest.Compute(t, ws)
			assert.Equal(t, tt.want, got.Status, "kstatus message: %s", got.Message)
			// Only a wait for a person is left to kstatus's Ready fallback.
			assert.Equal(t, !tt.waitsForPerson, got.Standard, "decided by Reconciling/Stalled/observedGeneration alone")
		})
	}
}

// TestStallingReasonsAreNotRetried: a failure reason is either stalling or
// retried, never both. A run that failed with a stalling reason gets no
// retry time, decide starts nothing and waits for nothing, and kstatus reads
// Failed; any other reason is retried at its retry time and reads
// InProgress meanwhile.
func TestStallingReasonsAreNotRetried(t *testing.T) {
	reasons := []string{magosv1.ReasonRunFailed, "NoReport", magosv1.ReasonJobMissing, magosv1.ReasonImagePullFailed, "InitFailed", "PlanFailed", "ApplyFailed"}
	for _, r := range magosv1.ReasonTable() {
		if r.Class == magosv1.ReasonStalls {
			reasons = append(reasons, r.Reason)
		}
	}
	now := time.Now()
	for _, reason := range reasons {
		t.Run(reason, func(t *testing.T) {
			failed := &magosv1.RunStatus{Job: "ws-plan-1", Phase: magosv1.RunPlan, Result: magosv1.ResultFailed, Reason: reason,
				Revision: "r1", InputsDigest: "i1", Finished: &metav1.Time{Time: now}}
			f := Facts{Now: now, Revision: "r1", Inputs: "i1", LastRun: failed, Retry: nextRetry(nil, nil, failed, RetryPolicy{Interval: time.Minute})}
			d := Decide(f)
			ws := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Generation: 1}}
			ComputeStatus(ws, Observation{Revision: "r1", Decision: d})
			got := kstatustest.Compute(t, ws).Status
			if stalls(reason) {
				assert.Nil(t, f.Retry.NextTime, "no retry time")
				assert.True(t, d.Stalled)
				assert.Equal(t, ActNone, d.Action, "nothing starts, nothing is requeued")
				assert.Equal(t, status.FailedStatus, got)
				return
			}
			assert.False(t, d.Stalled)
			assert.Equal(t, ActWait, d.Action)
			assert.Equal(t, time.Minute, d.After)
			assert.Equal(t, status.InProgressStatus, got)
			f.Now = now.Add(time.Minute)
			assert.Equal(t, ActStart, decideAnswering(t, f).Action, "retried once its time has come")
		})
	}
}
