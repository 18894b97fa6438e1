package decide

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/plansummary"
)

// RunEnd is what the controller established about the current run once it
// ended: fold reads nothing else. Result is the runner's report as read
// (readRunResult), the rest the controller's own checks, made before
// folding (observeRunEnd).
type RunEnd struct {
	Now time.Time
	// Name is the Workspace's: the state Secrets status names.
	Name   string
	Result magosv1.RunResult
	// Failure is the reason a failed run is counted with (runjob.FailureReason).
	Failure string
	Retry   RetryPolicy
	// MaxPlanChunks is how many plan Secrets the cluster lets one
	// Workspace keep (--max-plan-chunks).
	MaxPlanChunks int

	// Seal is the stored plan read back after a plan or fast run
	// succeeded; nil for other runs.
	Seal *SealedPlan
	// RevokeErr: the identity of a finished plan run was not revoked.
	RevokeErr error
	// Reserved is what reserving the plan Secrets a plan ran out of did;
	// nil unless the run needs it (NeedsReservation).
	Reserved *ChunkReservation
	// Lock is the state lock's holder, read after a run failed or found
	// the state locked (NeedsLock); nil when no one holds it.
	Lock *magosv1.LockStatus
}

// SealedPlan is the stored plan as the controller read it back
// (sealStoredPlan): its bundle digest and, for a plan run, the summary
// of its plan.json; Err when it could not be read back or is not the
// plan the run reported.
type SealedPlan struct {
	BundleDigest string
	Summary      plansummary.Summary
	Err          error
}

// ChunkReservation is what reservePlanChunks did: how many plan Secrets it
// created, and why it stopped early.
type ChunkReservation struct {
	Created int
	Err     error
}

// folded is what folding a run produces besides the status: the events to
// record (in order, while the run is still current) and the metrics to
// record after the status patch.
type folded struct {
	Notes   []Note
	Metrics RunMetrics
}

func (f *folded) note(eventType, reason, format string, args ...any) {
	f.Notes = append(f.Notes, Note{Type: eventType, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// RunMetrics are the metrics of one finished run.
type RunMetrics struct {
	Phase, Result string
	// Seconds is the run's duration, when it has a start (Timed).
	Seconds float64
	Timed   bool
	Steps   *magosv1.RunSteps
	// Drift: a drift check found changes. Failed: the run failed or found
	// the state locked, counted with Failure.
	Drift, Failed bool
	Failure       string
	// RetryOutcome is what follows a failed run ("" for none).
	RetryOutcome string
}

// Settled is the run's result once the controller's checks are in: a plan
// run whose stored plan cannot be read back failed (PlanCorrupt), and a
// plan's counts are its stored plan.json's, never the runner's report (the
// runner ran config code).
func (e RunEnd) Settled(phase string) (magosv1.RunResult, string) {
	res, failure := e.Result, e.Failure
	if res.Result != magosv1.ResultSucceeded || phase != magosv1.RunPlan || e.Seal == nil {
		return res, failure
	}
	if e.Seal.Err != nil {
		res = magosv1.RunResult{Phase: res.Phase, Result: magosv1.ResultFailed, Reason: magosv1.ReasonPlanCorrupt, Message: e.Seal.Err.Error(), Steps: res.Steps}
		failure = magosv1.ReasonPlanCorrupt
	}
	s := e.Seal.Summary
	res.Add, res.Change, res.Destroy, res.HasChanges = s.Add, s.Change, s.Destroy, s.HasChanges
	return res, failure
}

// NeedsSeal says whether a run with result res in phase is sealed: a plan
// or fast run that succeeded stored a plan.
func NeedsSeal(phase string, res magosv1.RunResult) bool {
	return res.Result == magosv1.ResultSucceeded && (phase == magosv1.RunPlan || phase == magosv1.RunPlanApply)
}

// NeedsReservation says whether the run (settled) ran out of plan Secrets
// that the cluster allows: they are reserved and the Workspace plans again.
func NeedsReservation(res magosv1.RunResult, maxChunks int) bool {
	return res.Result == magosv1.ResultStale && res.Reason == magosv1.ReasonPlanStorageExhausted && res.PlanChunks <= maxChunks
}

// NeedsLock says whether the state lock's holder is read after the run
// (settled): a run that failed or found the state locked may leave it held.
func NeedsLock(res magosv1.RunResult) bool {
	return res.Result == magosv1.ResultLocked || res.Result == magosv1.ResultFailed
}

// Fold is the status after the current run of st ended as e says, a pure
// function, with the events and metrics that go with it. The rules, by the
// run's settled result (first match wins):
//
//   - A plan that succeeded becomes status.plan (the controller's plan ID,
//     the stored plan's counts and bundle digest); a drift check with
//     changes is DriftDetected, a destroy plan DestroyPlanned, else
//     Planned.
//   - A fast run that succeeded is its plan, applied without a gate, and
//     its apply in one step (foldFastRun).
//   - An apply that succeeded is status.lastApplied with its outputs (a
//     destroy apply clears them: Destroyed); a destroy run without a plan
//     is Destroyed.
//   - A plan that ran out of plan Secrets: beyond --max-plan-chunks the run
//     failed (PlanStorageLimitExceeded); else the Secrets are reserved and
//     the Workspace plans again, or, when none was missing, the run failed.
//   - Any other stale plan is dropped and made again (PlanStale).
//   - State the run could not write back (StateNotSaved) is recorded for a
//     person to restore.
//   - Any other failure is RunFailed; after a failed apply the plan is
//     dropped (the state may have moved).
//
// Then, for every run: the lock holder read after a failure is recorded,
// the retry state follows (nextRetry), and the run goes to the head of
// status.history.
func Fold(st magosv1.WorkspaceStatus, e RunEnd) (magosv1.WorkspaceStatus, folded) {
	cr := *st.CurrentRun
	res, failure := e.Settled(cr.Phase)
	var out folded
	if cr.Phase == magosv1.RunPlan && e.RevokeErr != nil {
		out.note(corev1.EventTypeWarning, magosv1.ReasonPlanIdentityNotRevoked,
			"The plan identity %s of finished plan %s was not revoked (its tokens stay valid until they expire): %v",
			magosv1.PlanRunnerServiceAccountName(e.Name), cr.PlanID, e.RevokeErr)
	}
	var bundleDigest string
	if e.Seal != nil {
		bundleDigest = e.Seal.BundleDigest
		if cr.Phase == magosv1.RunPlanApply && e.Seal.Err != nil {
			// Applied already: a plan that cannot be read back loses only
			// its record.
			out.note(corev1.EventTypeWarning, magosv1.ReasonPlanNotRecorded, "Run %s applied its plan, but the stored plan cannot be shown: %v", cr.Job, e.Seal.Err)
		}
	}

	now := metav1.NewTime(e.Now)
	cr.Finished = &now
	cr.Result = res.Result
	cr.Reason = res.Reason
	cr.Message = truncate(res.Message, 512)
	out.Metrics = RunMetrics{Phase: cr.Phase, Result: res.Result, Steps: res.Steps}
	if cr.Started != nil {
		out.Metrics.Timed, out.Metrics.Seconds = true, now.Sub(cr.Started.Time).Seconds()
	}

	// The plan ID is the one the controller chose (cr.PlanID), never the one
	// the runner reports: the runner runs config code.
	switch {
	case res.Result == magosv1.ResultSucceeded && cr.Phase == magosv1.RunPlan:
		st.Plan = &magosv1.PlanStatus{
			ID: cr.PlanID, Revision: cr.Revision, Digest: res.PlanDigest, BundleDigest: bundleDigest, InputsDigest: cr.InputsDigest, ContentDigest: cr.ContentDigest,
			Add: res.Add, Change: res.Change, Destroy: res.Destroy, HasChanges: res.HasChanges,
			Drift: cr.Drift, Mode: cr.Mode, Request: cr.Request, Storage: res.Storage, Time: &now,
		}
		if cr.Request != nil {
			st.LastHandledPlanRequest = cr.Request.ID
		}
		switch {
		case cr.Drift && res.HasChanges:
			out.Metrics.Drift = true
			out.note(corev1.EventTypeWarning, magosv1.ReasonDriftDetected, "Drift check %s found changes made outside Magos: %s", cr.PlanID, PlanSummary(st.Plan))
		case cr.Mode == magosv1.PlanModeDestroy:
			out.note(corev1.EventTypeNormal, magosv1.ReasonDestroyPlanned, "Destroy plan %s of revision %s: %s", cr.PlanID, cr.Revision, PlanSummary(st.Plan))
		case cr.Request.Scoped():
			out.note(corev1.EventTypeNormal, magosv1.ReasonPlanned, "Plan %s of revision %s for request %s (%s): %s", cr.PlanID, cr.Revision, cr.Request.ID, requestFlags(cr.Request), PlanSummary(st.Plan))
		default:
			out.note(corev1.EventTypeNormal, magosv1.ReasonPlanned, "Plan %s of revision %s: %s", cr.PlanID, cr.Revision, PlanSummary(st.Plan))
		}
	case res.Result == magosv1.ResultSucceeded && cr.Phase == magosv1.RunPlanApply:
		foldFastRun(&st, &cr, res, bundleDigest, now, &out)
	case res.Result == magosv1.ResultSucceeded && cr.Phase == magosv1.RunApply && cr.Mode == magosv1.PlanModeDestroy:
		st.LastApplied = &magosv1.AppliedStatus{PlanID: cr.PlanID, Revision: cr.Revision, Time: now}
		st.Outputs, st.OutputVersions = nil, nil
		out.note(corev1.EventTypeNormal, magosv1.ReasonDestroyed, "Applied destroy plan %s of revision %s: the Workspace's resources are destroyed", cr.PlanID, cr.Revision)
	case res.Result == magosv1.ResultSucceeded && cr.Phase == magosv1.RunApply:
		st.LastApplied = &magosv1.AppliedStatus{PlanID: cr.PlanID, Revision: cr.Revision, Time: now}
		st.Outputs = res.Outputs
		st.OutputVersions = nextOutputVersions(st.OutputVersions, res.Outputs, res.ChangedOutputs, cr.PlanID)
		out.note(corev1.EventTypeNormal, magosv1.ReasonApplied, "Applied plan %s of revision %s", cr.PlanID, cr.Revision)
	case res.Result == magosv1.ResultSucceeded:
		out.note(corev1.EventTypeNormal, magosv1.ReasonDestroyed, "Destroyed the resources of revision %s", cr.Revision)
	case res.Result == magosv1.ResultStale && res.Reason == magosv1.ReasonPlanStorageExhausted && !NeedsReservation(res, e.MaxPlanChunks):
		// More than this cluster lets one Workspace keep: nothing is
		// stored, the run fails and is retried like any failure.
		st.Plan = nil
		cr.Result, cr.Reason = magosv1.ResultFailed, magosv1.ReasonPlanStorageLimitExceeded
		cr.Message = fmt.Sprintf("the plan needs %d plan Secrets (about %d MiB stored); this cluster allows %d per Workspace (--max-plan-chunks)",
			res.PlanChunks, res.PlanChunks*magosv1.PlanChunkBytes>>20, e.MaxPlanChunks)
		out.note(corev1.EventTypeWarning, magosv1.ReasonPlanStorageLimitExceeded, "The plan run %s failed: %s", cr.Job, cr.Message)
	case res.Result == magosv1.ResultStale && res.Reason == magosv1.ReasonPlanStorageExhausted:
		st.Plan = nil
		switch rv := e.Reserved; {
		case rv == nil || rv.Err != nil:
			// The next plan finds too few again and comes back here.
		case rv.Created == 0:
			// Nothing was missing: planning again at once would loop; fail
			// and retry after the retry interval instead.
			cr.Result = magosv1.ResultFailed
			out.note(corev1.EventTypeWarning, magosv1.ReasonRunFailed, "The %s run %s failed: %s", cr.Phase, cr.Job, cr.Message)
		default:
			out.note(corev1.EventTypeNormal, magosv1.ReasonPlanStorageExhausted, "Plan %s needs %d plan Secrets; reserved them, planning again", cr.PlanID, res.PlanChunks)
		}
	case res.Result == magosv1.ResultStale:
		st.Plan = nil
		out.note(corev1.EventTypeWarning, magosv1.ReasonPlanStale, "Plan %s is stale (%s); re-planning", cr.PlanID, res.Message)
	case res.Reason == magosv1.ReasonStateNotSaved:
		st.Plan = nil
		st.ErroredState = &magosv1.ErroredStateStatus{
			Job: cr.Job, Secret: erroredStateSecret(e.Name, res), StateSecret: magosv1.StateSecretName(e.Name), Since: &now,
		}
		out.note(corev1.EventTypeWarning, magosv1.ReasonStateNotSaved, "The %s run %s could not write its state back: %s", cr.Phase, cr.Job, cr.Message)
	default:
		if cr.Phase == magosv1.RunApply || cr.Phase == magosv1.RunPlanApply {
			st.Plan = nil // the state may have moved; re-plan after the retry interval
		}
		out.note(corev1.EventTypeWarning, magosv1.ReasonRunFailed, "The %s run %s failed: %s", runKind(cr.Phase, cr.Mode, cr.Drift), cr.Job, cr.Message)
	}
	if cr.Result == magosv1.ResultFailed || cr.Result == magosv1.ResultLocked {
		out.Metrics.Failed, out.Metrics.Failure = true, failure
	}
	if NeedsLock(res) && e.Lock != nil {
		st.Lock = e.Lock
	}

	st.Retry = nextRetry(st.Retry, st.LastRun(), &cr, e.Retry)
	if rs := st.Retry; rs != nil {
		out.Metrics.RetryOutcome = retryOutcome(rs, cr.Reason)
	}
	cr.ContentDigest = "" // the plan keeps it; history does not need it
	// What bound the run in progress to its Job and artifact (the artifact
	// proxy reads it) ended with it.
	cr.JobUID, cr.ArtifactURL, cr.ArtifactDigest = "", "", ""
	st.History = append([]magosv1.RunStatus{cr}, st.History...)
	if len(st.History) > magosv1.RunHistoryLimit {
		st.History = st.History[:magosv1.RunHistoryLimit]
	}
	st.CurrentRun = nil
	return st, out
}

// foldFastRun folds a fast run that succeeded into st: its plan, marked as
// applied without a gate, and, in the same step, its apply (or, for a plan
// without changes, nothing to apply). One event says which.
func foldFastRun(st *magosv1.WorkspaceStatus, cr *magosv1.RunStatus, res magosv1.RunResult, bundleDigest string, now metav1.Time, out *folded) {
	verdict := "No policy selected this Workspace when the run started: applied without a gate"
	if c := meta.FindStatusCondition(st.Conditions, magosv1.PolicyPassedCondition); c != nil && c.Status == metav1.ConditionTrue && c.Reason == magosv1.ReasonPolicyPassed {
		verdict = c.Message // noPolicyDecides's, as the run started
	}
	plan := &magosv1.PlanStatus{
		ID: cr.PlanID, Revision: cr.Revision, Digest: res.PlanDigest, BundleDigest: bundleDigest, InputsDigest: cr.InputsDigest, ContentDigest: cr.ContentDigest,
		Add: res.Add, Change: res.Change, Destroy: res.Destroy, HasChanges: res.HasChanges,
		Drift: cr.Drift, Request: cr.Request, Storage: res.Storage, Time: &now, AppliedWithoutGate: true,
		Policy: &magosv1.PolicyVerdict{Passed: true, Message: verdict},
	}
	st.Plan = plan
	if cr.Request != nil {
		st.LastHandledPlanRequest = cr.Request.ID
	}
	st.LastApplied = &magosv1.AppliedStatus{PlanID: cr.PlanID, Revision: cr.Revision, Time: now}
	switch {
	case !res.HasChanges:
		out.note(corev1.EventTypeNormal, magosv1.ReasonNoChanges, "Plan %s of revision %s has no changes; nothing to apply", plan.ID, plan.Revision)
		return
	case cr.Drift:
		out.Metrics.Drift = true
		out.note(corev1.EventTypeWarning, magosv1.ReasonDriftDetected, "Drift check %s found changes made outside Magos (%s) and applied the configuration over them (no decision rests on its plans)",
			plan.ID, PlanSummary(plan))
	default:
		out.note(corev1.EventTypeNormal, magosv1.ReasonApplied, "Planned and applied plan %s of revision %s in one run (%s; no decision rests on it)", plan.ID, plan.Revision, PlanSummary(plan))
	}
	st.Outputs = res.Outputs
	st.OutputVersions = nextOutputVersions(st.OutputVersions, res.Outputs, res.ChangedOutputs, cr.PlanID)
}

// erroredStateSecret is where the run saved the state it could not write
// back: the Secret the controller reserved for it, named by the
// controller, never by the runner's report ("" when the run saved none).
func erroredStateSecret(name string, res magosv1.RunResult) string {
	if res.ErroredState == "" {
		return ""
	}
	return magosv1.ErroredStateSecretName(name)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// FoldInto is Fold on *st, in place.
func FoldInto(st *magosv1.WorkspaceStatus, e RunEnd) folded {
	var out folded
	*st, out = Fold(*st, e)
	return out
}
