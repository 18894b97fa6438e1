package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/apis/plansummary"
	"github.com/magos-dev/magos/controllers/internal/metrics"
)

// JobMissingReason: the run's Job and Pod are gone (a live read confirmed
// it) and its result was never read.
const JobMissingReason = "JobMissing"

// readRunResult reads the runner's report from the termination message of
// the Job's Pod, and returns it with that Pod (else the last Pod of the
// Job that ended, nil if there is none), which says whether the run was
// stopped from outside. A run without a report (killed, deadline) gets one
// built from the Job's status.
//
// Only Pods the Job controls (a controller owner reference with this Job's
// UID, as the job controller sets it) count: a Pod that merely carries the
// Job's job-name label does not report for it. A nil job is one a live read
// found gone: its Pod's report is still read if the Pod is left (a Job
// deleted while its Pod stopped), else the run failed with JobMissing.
func (r *Reconciler) readRunResult(ctx context.Context, ws *magosv1.Workspace, job *batchv1.Job, name, phase string) (magosv1.RunResult, *corev1.Pod) {
	succeeded := false
	if job != nil {
		_, succeeded = jobFinished(job)
	}
	var ended *corev1.Pod
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(ws.Namespace), client.MatchingLabels{"job-name": name}); err == nil {
		for i, p := range pods.Items {
			if job != nil && !metav1.IsControlledBy(&pods.Items[i], job) {
				// Labels are anyone's to set: only the Job's own Pods report.
				continue
			}
			if podEnded(&pods.Items[i]) {
				ended = &pods.Items[i]
			}
			for _, cs := range p.Status.ContainerStatuses {
				if t := cs.State.Terminated; t != nil && t.Message != "" {
					var res magosv1.RunResult
					if err := json.Unmarshal([]byte(t.Message), &res); err == nil && res.Result != "" {
						res = res.Sanitized()
						if job != nil && !succeeded && res.Result == magosv1.ResultSucceeded {
							res.Result = magosv1.ResultFailed
						}
						return res, &pods.Items[i]
					}
				}
			}
		}
	}
	if job == nil {
		return magosv1.RunResult{Phase: phase, Result: magosv1.ResultFailed, Reason: JobMissingReason, Message: "the run's Job disappeared before its result was read"}, ended
	}
	if succeeded {
		return magosv1.RunResult{Phase: phase, Result: magosv1.ResultFailed, Reason: "NoReport", Message: "the runner exited without a report"}, ended
	}
	return magosv1.RunResult{Phase: phase, Result: magosv1.ResultFailed, Reason: RunFailedReason, Message: runnerEnd(ended) + jobFailureMessage(job)}, ended
}

// recordResult folds a finished run into status: a new plan, an applied
// plan, a stale plan to redo or a held lock; history, events and metrics.
func (r *Reconciler) recordResult(ctx context.Context, ws *magosv1.Workspace, job *batchv1.Job, retry retryPolicy) error {
	cr := ws.Status.CurrentRun
	res, pod := r.readRunResult(ctx, ws, job, cr.Job, cr.Phase)
	failure := failureReason(res, job, pod)
	if failure == OOMKilledReason && res.Result != magosv1.ResultSucceeded {
		res = outOfMemory(res, pod)
	}
	return r.recordRunResult(ctx, ws, res, failure, retry)
}

// recordRunResult folds res, the result of the current run, into status;
// a failure is counted with failure (failureReason) and retried by retry.
func (r *Reconciler) recordRunResult(ctx context.Context, ws *magosv1.Workspace, res magosv1.RunResult, failure string, retry retryPolicy) error {
	cr := ws.Status.CurrentRun
	if cr.Phase == magosv1.RunPlan {
		if err := r.revokePlanIdentity(ctx, ws); err != nil {
			// The result is recorded all the same: a run never hangs on it.
			ctrl.LoggerFrom(ctx).Error(err, "Failed to revoke the plan identity of a finished plan")
			r.event(ws, corev1.EventTypeWarning, PlanIdentityNotRevokedReason,
				"The plan identity %s of finished plan %s was not revoked (its tokens stay valid until they expire): %v",
				magosv1.PlanRunnerServiceAccountName(ws.Name), cr.PlanID, err)
		}
	}
	var bundleDigest string
	if res.Result == magosv1.ResultSucceeded && cr.Phase == magosv1.RunPlan {
		var summary plansummary.Summary
		var err error
		if bundleDigest, err = r.sealStoredPlan(ctx, ws, cr, res, func(planJSON io.Reader) (err error) {
			summary, err = plansummary.Read(planJSON)
			return err
		}); err != nil {
			res = magosv1.RunResult{Phase: res.Phase, Result: magosv1.ResultFailed, Reason: magosv1.ReasonPlanCorrupt, Message: err.Error(), Steps: res.Steps}
			failure = magosv1.ReasonPlanCorrupt
		}
		res.Add, res.Change, res.Destroy, res.HasChanges = summary.Add, summary.Change, summary.Destroy, summary.HasChanges
	}
	if res.Result == magosv1.ResultSucceeded && cr.Phase == magosv1.RunPlanApply {
		// Applied already: nothing decided on the plan, so its counts are
		// the runner's; the bundle digest still pins what plan show shows.
		// A plan that cannot be read back loses only its record.
		var err error
		if bundleDigest, err = r.sealStoredPlan(ctx, ws, cr, res, nil); err != nil {
			r.event(ws, corev1.EventTypeWarning, PlanNotRecordedReason, "Run %s applied its plan, but the stored plan cannot be shown: %v", cr.Job, err)
		}
	}
	now := metav1.Now()
	cr.Finished = &now
	cr.Result = res.Result
	cr.Reason = res.Reason
	cr.Message = truncate(res.Message, 512)
	if cr.Started != nil {
		phase, result, seconds := cr.Phase, res.Result, now.Sub(cr.Started.Time).Seconds()
		r.later(func() { metrics.RecordRun(phase, result, seconds) })
	}
	if steps := res.Steps; steps != nil {
		phase := cr.Phase
		r.later(func() {
			metrics.RecordRunStep(phase, metrics.StepFetch, steps.Fetch)
			metrics.RecordRunStep(phase, metrics.StepInit, steps.Init)
			metrics.RecordRunStep(phase, metrics.StepEngine, steps.Engine)
			metrics.RecordRunStep(phase, metrics.StepRender, steps.Render)
			metrics.RecordRunStep(phase, metrics.StepStorage, steps.Storage)
		})
	}

	var reserveErr error
	// The plan ID is the one the controller chose (cr.PlanID), never the one
	// the runner reports: the runner runs config code.
	switch {
	case res.Result == magosv1.ResultSucceeded && cr.Phase == magosv1.RunPlan:
		ws.Status.Plan = &magosv1.PlanStatus{
			ID: cr.PlanID, Revision: cr.Revision, Digest: res.PlanDigest, BundleDigest: bundleDigest, InputsDigest: cr.InputsDigest,
			Add: res.Add, Change: res.Change, Destroy: res.Destroy, HasChanges: res.HasChanges,
			Drift: cr.Drift, Mode: cr.Mode, Request: cr.Request, Storage: res.Storage, Time: &now,
		}
		if cr.Request != nil {
			ws.Status.LastHandledPlanRequest = cr.Request.ID
		}
		switch {
		case cr.Drift && res.HasChanges:
			r.later(metrics.RecordDrift)
			r.event(ws, corev1.EventTypeWarning, DriftDetectedReason, "Drift check %s found changes made outside Magos: %s", cr.PlanID, PlanSummary(ws.Status.Plan))
		case cr.Mode == magosv1.PlanModeDestroy:
			r.event(ws, corev1.EventTypeNormal, DestroyPlannedReason, "Destroy plan %s of revision %s: %s", cr.PlanID, cr.Revision, PlanSummary(ws.Status.Plan))
		case cr.Request.Scoped():
			r.event(ws, corev1.EventTypeNormal, PlannedReason, "Plan %s of revision %s for request %s (%s): %s", cr.PlanID, cr.Revision, cr.Request.ID, requestFlags(cr.Request), PlanSummary(ws.Status.Plan))
		default:
			r.event(ws, corev1.EventTypeNormal, PlannedReason, "Plan %s of revision %s: %s", cr.PlanID, cr.Revision, PlanSummary(ws.Status.Plan))
		}
	case res.Result == magosv1.ResultSucceeded && cr.Phase == magosv1.RunPlanApply:
		r.recordFastRun(ws, cr, res, bundleDigest, now)
	case res.Result == magosv1.ResultSucceeded && cr.Phase == magosv1.RunApply && cr.Mode == magosv1.PlanModeDestroy:
		ws.Status.LastApplied = &magosv1.AppliedStatus{PlanID: cr.PlanID, Revision: cr.Revision, Time: now}
		ws.Status.Outputs, ws.Status.OutputVersions = nil, nil
		r.event(ws, corev1.EventTypeNormal, DestroyedReason, "Applied destroy plan %s of revision %s: the Workspace's resources are destroyed", cr.PlanID, cr.Revision)
	case res.Result == magosv1.ResultSucceeded && cr.Phase == magosv1.RunApply:
		ws.Status.LastApplied = &magosv1.AppliedStatus{PlanID: cr.PlanID, Revision: cr.Revision, Time: now}
		ws.Status.Outputs = res.Outputs
		ws.Status.OutputVersions = nextOutputVersions(ws.Status.OutputVersions, res.Outputs, res.ChangedOutputs, cr.PlanID)
		r.event(ws, corev1.EventTypeNormal, AppliedReason, "Applied plan %s of revision %s", cr.PlanID, cr.Revision)
	case res.Result == magosv1.ResultSucceeded:
		r.event(ws, corev1.EventTypeNormal, DestroyedReason, "Destroyed the resources of revision %s", cr.Revision)
	case res.Result == magosv1.ResultStale && res.Reason == magosv1.ReasonPlanStorageExhausted && res.PlanChunks > r.Options.maxPlanChunks():
		// More than this cluster lets one Workspace keep: nothing is
		// stored, the run fails and is retried like any failure.
		ws.Status.Plan = nil
		cr.Result, cr.Reason = magosv1.ResultFailed, PlanStorageLimitReason
		cr.Message = fmt.Sprintf("the plan needs %d plan Secrets (about %d MiB stored); this cluster allows %d per Workspace (--max-plan-chunks)",
			res.PlanChunks, res.PlanChunks*magosv1.PlanChunkBytes>>20, r.Options.maxPlanChunks())
		r.event(ws, corev1.EventTypeWarning, PlanStorageLimitReason, "The plan run %s failed: %s", cr.Job, cr.Message)
	case res.Result == magosv1.ResultStale && res.Reason == magosv1.ReasonPlanStorageExhausted:
		ws.Status.Plan = nil
		// On an error the next plan finds too few again and comes back here.
		var created int
		created, reserveErr = r.reservePlanChunks(ctx, ws, res.PlanChunks)
		if reserveErr == nil && created == 0 {
			// Nothing was missing: planning again at once would loop; fail
			// and retry after the retry interval instead.
			cr.Result = magosv1.ResultFailed
			r.event(ws, corev1.EventTypeWarning, RunFailedReason, "The %s run %s failed: %s", cr.Phase, cr.Job, cr.Message)
			break
		}
		r.event(ws, corev1.EventTypeNormal, magosv1.ReasonPlanStorageExhausted, "Plan %s needs %d plan Secrets; reserved them, planning again", cr.PlanID, res.PlanChunks)
	case res.Result == magosv1.ResultStale:
		ws.Status.Plan = nil
		r.event(ws, corev1.EventTypeWarning, PlanStaleReason, "Plan %s is stale (%s); re-planning", cr.PlanID, res.Message)
	case res.Reason == magosv1.ReasonStateNotSaved:
		ws.Status.Plan = nil
		ws.Status.ErroredState = &magosv1.ErroredStateStatus{
			Job: cr.Job, Secret: erroredStateSecret(ws, res), StateSecret: magosv1.StateSecretName(ws.Name), Since: &now,
		}
		r.event(ws, corev1.EventTypeWarning, magosv1.ReasonStateNotSaved, "The %s run %s could not write its state back: %s", cr.Phase, cr.Job, cr.Message)
	default:
		if cr.Phase == magosv1.RunApply || cr.Phase == magosv1.RunPlanApply {
			ws.Status.Plan = nil // the state may have moved; re-plan after the retry interval
		}
		r.event(ws, corev1.EventTypeWarning, RunFailedReason, "The %s run %s failed: %s", runKind(cr.Phase, cr.Mode, cr.Drift), cr.Job, cr.Message)
	}
	if cr.Result == magosv1.ResultFailed || cr.Result == magosv1.ResultLocked {
		phase := cr.Phase
		r.later(func() { metrics.RecordRunFailure(phase, failure) })
	}
	if res.Result == magosv1.ResultLocked || res.Result == magosv1.ResultFailed {
		if err := r.observeLock(ctx, ws, res.LockHolder); err != nil {
			return err
		}
	}

	ws.Status.Retry = nextRetry(ws.Status.Retry, ws.Status.LastRun(), cr, retry)
	if rs := ws.Status.Retry; rs != nil {
		outcome := retryOutcome(rs, cr.Reason)
		r.later(func() { metrics.RecordRetry(outcome) })
	}
	ws.Status.History = append([]magosv1.RunStatus{*cr}, ws.Status.History...)
	if len(ws.Status.History) > magosv1.RunHistoryLimit {
		ws.Status.History = ws.Status.History[:magosv1.RunHistoryLimit]
	}
	ws.Status.CurrentRun = nil
	return reserveErr
}

// sealStoredPlan reads back the plan a run stored, once: plan.json
// streams through read (for a plan run, the summary: the counts and
// hasChanges status shows come from it, not from the runner's report: the
// runner ran config code), and every chunk is checked without being
// unpacked. It returns the sha256 of
// the stream, the bundle digest status records and the apply and
// `kubectl magos plan show` check, so nothing written to the plan Secrets
// after this moment is applied or shown. The stored plan must be the one
// the controller asked for (its ID) with the digest the run reported.
//
// read, if set, gets plan.json as it streams (a fast run's plan, stored
// without one unless the run rendered it, is sealed without reading it).
func (r *Reconciler) sealStoredPlan(ctx context.Context, ws *magosv1.Workspace, cr *magosv1.RunStatus, res magosv1.RunResult, read func(planJSON io.Reader) error) (string, error) {
	if read == nil {
		read = func(io.Reader) error { return nil }
	}
	meta, err := planstore.Inspect(ctx, r.planGetter(ws.Namespace), ws.Name, read)
	switch {
	case err != nil:
		return "", fmt.Errorf("the %s run %s succeeded but its stored plan cannot be read back: %w", cr.Phase, cr.Job, err)
	case meta.ID != cr.PlanID || meta.Digest != res.PlanDigest:
		return "", fmt.Errorf("the %s run %s succeeded but the stored plan is %s with digest %s, not plan %s with the reported digest %s",
			cr.Phase, cr.Job, meta.ID, meta.Digest, cr.PlanID, res.PlanDigest)
	}
	return meta.SHA256, nil
}

// erroredStateSecret is where the run saved the state it could not write
// back: the Secret the controller reserved for it, named by the
// controller, never by the runner's report ("" when the run saved none).
func erroredStateSecret(ws *magosv1.Workspace, res magosv1.RunResult) string {
	if res.ErroredState == "" {
		return ""
	}
	return magosv1.ErroredStateSecretName(ws.Name)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
