package workspace

import (
	"context"
	"fmt"
	"io"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/apis/plansummary"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// readRunResult lists the Pods of the run's Job, uncached, and reads its
// report from them (runjob.ReadReport: only the Job's own Pods count, a
// report of success only from a Job or Pod that succeeded, a runner of
// another version is recorded as such). A nil job is one a live read
// found gone.
func (r *Reconciler) readRunResult(ctx context.Context, ws *magosv1.Workspace, job *batchv1.Job, name, phase string) (magosv1.RunResult, *corev1.Pod) {
	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(ws.Namespace), client.MatchingLabels{"job-name": name}); err != nil {
		pods.Items = nil
	}
	rep := runjob.ReadReport(job, pods.Items, phase, setup.Version)
	if rep.Mismatch != "" {
		r.notes(ws, []decide.Note{{Type: corev1.EventTypeWarning, Reason: magosv1.ReasonRunnerVersionMismatch, Message: fmt.Sprintf("Run %s: %s", name, rep.Mismatch)}})
	}
	return rep.Result, rep.Pod
}

// recordResult folds a finished run into status: a new plan, an applied
// plan, a stale plan to redo or a held lock; history, events and metrics.
func (r *Reconciler) recordResult(ctx context.Context, ws *magosv1.Workspace, job *batchv1.Job, retry decide.RetryPolicy) error {
	cr := ws.Status.CurrentRun
	res, pod := r.readRunResult(ctx, ws, job, cr.Job, cr.Phase)
	failure := runjob.FailureReason(res, job, pod)
	if failure == magosv1.ReasonOOMKilled && res.Result != magosv1.ResultSucceeded {
		res = runjob.OutOfMemory(res, pod)
	}
	return r.recordRunResult(ctx, ws, res, failure, retry)
}

// recordRunResult folds res, the result of the current run, into status;
// a failure is counted with failure (runjob.FailureReason) and retried by retry.
// The controller's checks come first (observeRunEnd), then the pure fold;
// its events are recorded while the run is still current, its metrics
// after the status patch.
func (r *Reconciler) recordRunResult(ctx context.Context, ws *magosv1.Workspace, res magosv1.RunResult, failure string, retry decide.RetryPolicy) error {
	end, err := r.observeRunEnd(ctx, ws, res, failure, retry)
	if err != nil {
		return err
	}
	metadata := eventMetadata(ws) // the events name the run folded
	out := decide.FoldInto(&ws.Status, end)
	r.notesAbout(ws, metadata, out.Notes)
	r.later(func() { recordRunMetrics(out.Metrics) })
	if end.Reserved != nil {
		return end.Reserved.Err
	}
	return nil
}

// observeRunEnd makes the controller's checks on the current run, which
// ended with res, and returns them as fold's facts: a finished plan's
// identity revoked, the stored plan read back (sealed), the plan Secrets
// a plan ran out of reserved, and the state lock's holder after a failure.
// Only reading the lock fails the recording: the run is read again.
func (r *Reconciler) observeRunEnd(ctx context.Context, ws *magosv1.Workspace, res magosv1.RunResult, failure string, retry decide.RetryPolicy) (decide.RunEnd, error) {
	cr := ws.Status.CurrentRun
	end := decide.RunEnd{Name: ws.Name, Result: res, Failure: failure, Retry: retry, MaxPlanChunks: r.Options.PlanChunks()}
	if cr.Phase == magosv1.RunPlan {
		if end.RevokeErr = r.revokePlanIdentity(ctx, ws); end.RevokeErr != nil {
			// The result is recorded all the same: a run never hangs on it.
			ctrl.LoggerFrom(ctx).Error(end.RevokeErr, "Failed to revoke the plan identity of a finished plan")
		}
	}
	if decide.NeedsSeal(cr.Phase, res) {
		seal := &decide.SealedPlan{}
		var read func(io.Reader) error
		if cr.Phase == magosv1.RunPlan {
			read = func(planJSON io.Reader) (err error) {
				seal.Summary, err = plansummary.Read(planJSON)
				return err
			}
		}
		seal.BundleDigest, seal.Err = r.sealStoredPlan(ctx, ws, cr, res, read)
		end.Seal = seal
	}
	settled, _ := end.Settled(cr.Phase)
	if decide.NeedsReservation(settled, end.MaxPlanChunks) {
		created, err := r.reservePlanChunks(ctx, ws, settled.PlanChunks)
		end.Reserved = &decide.ChunkReservation{Created: created, Err: err}
	}
	if decide.NeedsLock(settled) {
		lock, err := r.lockHolder(ctx, ws, settled.LockHolder)
		if err != nil {
			return end, err
		}
		end.Lock = lock
	}
	end.Now = time.Now() // the run is recorded as finished once the checks are in
	return end, nil
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

// recordRunMetrics records the metrics of a run fold counted.
func recordRunMetrics(m decide.RunMetrics) {
	if m.Timed {
		metrics.RecordRun(m.Phase, m.Result, m.Seconds)
	}
	if s := m.Steps; s != nil {
		metrics.RecordRunStep(m.Phase, metrics.StepFetch, s.Fetch)
		metrics.RecordRunStep(m.Phase, metrics.StepInit, s.Init)
		metrics.RecordRunStep(m.Phase, metrics.StepEngine, s.Engine)
		metrics.RecordRunStep(m.Phase, metrics.StepRender, s.Render)
		metrics.RecordRunStep(m.Phase, metrics.StepStorage, s.Storage)
	}
	if m.Drift {
		metrics.RecordDrift()
	}
	if m.Failed {
		metrics.RecordRunFailure(m.Phase, m.Failure)
	}
	if m.RetryOutcome != "" {
		metrics.RecordRetry(m.RetryOutcome)
	}
}
