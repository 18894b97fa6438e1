package workspace

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// reconcileRuns gathers the facts of a Workspace that has its inputs and
// source artifact, decides (decide) and carries out the decision. Actions
// that only change status (recording a plan without changes, releasing a
// lock, clearing restored state) change the facts, so it decides again
// after them. del is set while a destroyOnDelete Workspace is deleted.
func (r *Reconciler) reconcileRuns(ctx context.Context, ws *magosv1.Workspace, art artifact, s settings, in inputs,
	del *decide.DeletionFacts, obs *decide.Observation) (ctrl.Result, error) {
	project := in.Project
	inputs := runjob.InputsDigest(ws, s.Settings, in.SetDigests, in.OutputReads)
	var source *magosv1.SourceStatus
	if art.Revision != "" {
		source = &magosv1.SourceStatus{URL: art.URL, Revision: art.Revision, Digest: art.Digest}
	}
	decide.Observe(&ws.Status, inputs, source)

	f, err := r.gatherFacts(ctx, ws, art.Revision, inputs, s, project, del)
	if err != nil {
		return ctrl.Result{}, err
	}
	var lease *coordinationv1.Lease // the lock Lease an unlock deletes
	for {
		d := decide.Decide(f)
		obs.Decision, obs.Review = d, planReview(f)
		if d.HandledNow() {
			handled(ws)
		}
		switch d.Action {
		case decide.ActNone:
			return ctrl.Result{}, nil
		case decide.ActWait:
			return requeueAfter(d.After), nil
		case decide.ActAsk:
			l, err := r.answer(ctx, ws, &f, d.Ask, art, s)
			if err != nil {
				return ctrl.Result{}, err
			}
			if l != nil {
				lease = l
			}
		case decide.ActStart:
			if f.Held = r.Runs.Admit(ctx, r.Client, ws, d, f); f.Held != nil {
				continue // decide again: the queue holds the run
			}
			d.Run.Artifact = runjob.Artifact(art)
			if magosv1.RunPlans(d.Run.Phase) {
				d.Run.ContentDigest = f.Content.Digest
			}
			started, err := r.startRun(ctx, ws, d.Run, inputs, s, &f)
			if started && d.HandlesRequest {
				handled(ws)
			}
			if started {
				// Status says what the next reconcile would: the run is in
				// progress (one status write per transition, not two). The
				// decision's event is still recorded on entering it.
				running := decide.RunningDecision(ws.Status.CurrentRun, del != nil)
				running.Event = d.Event
				obs.Decision = running
			}
			if started && d.Run.Phase == magosv1.RunPlanApply {
				r.noPolicyDecides(ws, f.Deciders)
			}
			if err != nil || started {
				return ctrl.Result{}, err
			}
			// A live read found a run the cache did not show: decide on it.
			continue
		case decide.ActFinishDeletion:
			return ctrl.Result{}, r.finishDeletion(ctx, ws, d)
		default:
			if !decide.StatusOnly(d) {
				return ctrl.Result{}, fmt.Errorf("decide chose an action the reconciler does not know: %d", d.Action)
			}
			var err error
			if f, err = r.applyStatusOnly(ctx, ws, f, d, lease, s, project); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
}

// answer reads the fact decide asked for into f: what the Workspace reads
// in the artifact, or what an unlock request found (and the Lease it
// would delete).
func (r *Reconciler) answer(ctx context.Context, ws *magosv1.Workspace, f *decide.Facts, a decide.Ask, art artifact, s settings) (*coordinationv1.Lease, error) {
	switch a {
	case decide.AskContent:
		f.Content = r.contentOf(ctx, ws, art, s.Content)
	case decide.AskUnlock:
		check, lease, err := r.checkUnlock(ctx, ws)
		if err != nil {
			return nil, err
		}
		f.Unlock = check
		return lease, nil
	default:
		return nil, fmt.Errorf("decide asked for an unknown fact %d", a)
	}
	return nil, nil
}

// applyStatusOnly carries out decision d, whose action only changes
// status (decide.ApplyStatusOnly), after its part outside status: the
// Lease an unlock deletes. Its events carry what the status named before.
// A pending plan carried to a new revision has its gate, Rollout and
// approval facts gathered again. It returns the facts to decide again on.
func (r *Reconciler) applyStatusOnly(ctx context.Context, ws *magosv1.Workspace, f decide.Facts, d decide.Decision,
	lease *coordinationv1.Lease, s settings, project *magosv1.Project) (decide.Facts, error) {
	switch d.Action {
	case decide.ActReleaseLock:
		if err := r.deleteLease(ctx, lease); err != nil {
			return f, err
		}
	case decide.ActClearErroredState:
		ctrl.LoggerFrom(ctx).Info("The state was restored; planning again", "job", ws.Status.ErroredState.Job)
	}
	pending := d.Action == decide.ActCarryRevision && f.CarriesPending()
	metadata := eventMetadata(ws)
	f, notes := decide.ApplyStatusOnly(&ws.Status, f, d)
	r.notesAbout(ws, metadata, notes)
	if pending {
		// The gate, the Rollout and the approvals decide on the plan at
		// its new revision.
		return f, r.gatherPlanFacts(ctx, ws, &f, s, project)
	}
	return f, nil
}

// planReview is the approval rules' review of f's plan for status, nil
// when the facts hold none.
func planReview(f decide.Facts) *decide.PlanReview {
	if f.Review == nil || f.Plan == nil {
		return nil
	}
	return &decide.PlanReview{Plan: f.Plan.ID, Review: *f.Review}
}

// handled records the reconcile request as handled.
func handled(ws *magosv1.Workspace) {
	decide.HandleRequest(&ws.Status, ws.Annotations[magosv1.ReconcileRequestAnnotation])
}

// startRun reserves what the run writes, ensures the runner's identity and
// creates the Job of run rn. It reports started false when a live read
// found a run the cache did not show (or a Job of this run that already
// exists): then it records that run in f (and status) instead.
func (r *Reconciler) startRun(ctx context.Context, ws *magosv1.Workspace, rn runjob.Run, inputs string, s settings, f *decide.Facts) (bool, error) {
	if err := r.Options.Guards.CheckRunnerImage(s.Runner.Image); err != nil {
		return false, err
	}
	if err := r.Options.Guards.CheckEngineImage(s.EngineImage, s.SpecEngineImage != ""); err != nil {
		return false, err
	}
	st, err := r.reserveRunStorage(ctx, ws)
	// The Role names what was verified, also when something was not: a name
	// that conflicts never enters it, and leaves a Role made before.
	ierr := r.reconcileRunnerIdentity(ctx, ws, s.Runner, st, rn.Phase)
	if err != nil {
		return false, err
	}
	if ierr != nil {
		return false, rerror.Retry(magosv1.ReasonRunnerIdentityFailed, ierr)
	}
	rn.Number, rn.Inputs = ws.Status.Runs+1, inputs
	rn.ID = runjob.ID(string(ws.UID), rn.Phase, strconv.FormatInt(rn.Number, 10))
	if magosv1.RunPlans(rn.Phase) {
		rn.PlanID = rn.ID
	}
	job := r.buildJob(ws, rn, s)
	if err := controllerutil.SetControllerReference(ws, job, r.Scheme()); err != nil {
		return false, err
	}
	// A run the cache does not show yet (or whose start a lost status
	// patch forgot) is adopted, never doubled.
	if found, err := r.findLiveRun(ctx, ws, f); err != nil || found {
		return false, err
	}
	ctrl.LoggerFrom(ctx).Info("Starting run", "phase", rn.Phase, "mode", rn.Mode, "job", job.Name, "revision", rn.Artifact.Revision, "planID", rn.PlanID)
	if err := r.Create(ctx, job); apierrors.IsAlreadyExists(err) {
		// The same run was started before and its status was lost; the
		// Job that exists is the run, whatever this reconcile built.
		existing, gerr := r.liveJob(ctx, ws, job.Name)
		if gerr != nil {
			return false, gerr
		}
		if existing == nil {
			return false, fmt.Errorf("creating %s Job: %s exists and does not belong to Workspace %s", rn.Phase, job.Name, ws.Name)
		}
		ctrl.LoggerFrom(ctx).Info("Adopting the run's Job, which already exists", "job", job.Name)
		f.Running = runjob.Adopt(ws, existing)
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("creating %s Job: %w", rn.Phase, err)
	}
	r.notes(ws, decide.Started(&ws.Status, rn.Number, runjob.Started(job),
		decide.StartCaps{AskedInterval: s.AskedInterval, Interval: s.Interval, AskedTimeout: s.AskedTimeout, Timeout: s.Timeout}))
	return true, nil
}

// reconcileCurrentRun folds the result of the current run into status once
// it ended (a failure to be retried by retry), then adopts a running Job
// status does not know (one started before a controller restart, or whose
// start a lost status patch forgot) into status.currentRun. The current
// run is recorded first, so adopting the next run never drops its result.
func (r *Reconciler) reconcileCurrentRun(ctx context.Context, ws *magosv1.Workspace, retry decide.RetryPolicy) error {
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(ws.Namespace), client.MatchingLabels{magosv1.WorkspaceLabel: ws.Name}); err != nil {
		return err
	}
	if cr := ws.Status.CurrentRun; cr != nil && cr.Result == magosv1.ResultRunning {
		if running, err := r.endCurrentRun(ctx, ws, jobs.Items, retry); err != nil || running {
			return err
		}
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if !metav1.IsControlledBy(job, ws) || job.DeletionTimestamp != nil || recorded(ws, job.Name) {
			continue
		}
		if done, _ := runjob.Finished(job); !done {
			runjob.Adopt(ws, job)
			pods, err := r.jobPods(ctx, job)
			if err != nil {
				return err
			}
			return r.failOnStartError(ctx, ws, job, pods, retry)
		}
	}
	return nil
}

// endCurrentRun records the current run's result if it ended, and reports
// whether it is still running. A run ends when its Job finishes or, sooner,
// when the Job's Pod succeeded: the job controller marks the Job complete
// only after batching Pod updates for about a second, and a succeeded Pod
// of the Job says what a complete Job would. Only a live read says its Job
// is gone (the cache may not have seen it yet); a deleted Job's Pod may
// still be stopping (writing state, releasing the lock): the run ends when
// its Pod does.
func (r *Reconciler) endCurrentRun(ctx context.Context, ws *magosv1.Workspace, jobs []batchv1.Job, retry decide.RetryPolicy) (bool, error) {
	cr := ws.Status.CurrentRun
	var job *batchv1.Job
	for i := range jobs {
		if jobs[i].Name == cr.Job && metav1.IsControlledBy(&jobs[i], ws) {
			job = &jobs[i]
		}
	}
	if job == nil {
		var err error
		if job, err = r.liveJob(ctx, ws, cr.Job); err != nil {
			return false, err
		}
	}
	if job != nil && job.DeletionTimestamp == nil {
		if done, _ := runjob.Finished(job); !done {
			pods, err := r.jobPods(ctx, job)
			if err != nil {
				return false, err
			}
			// A succeeded Pod of the Job ends the run (see above).
			if !slices.ContainsFunc(pods, func(p corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded }) {
				return true, r.failOnStartError(ctx, ws, job, pods, retry)
			}
		}
	}
	if job == nil || job.DeletionTimestamp != nil {
		pod, err := r.livePod(ctx, ws, client.MatchingLabels{"job-name": cr.Job})
		if err != nil || pod != nil {
			return pod != nil, err
		}
		if job != nil {
			if done, _ := runjob.Finished(job); !done {
				job = nil
			}
		}
	}
	return false, r.recordResult(ctx, ws, job, retry)
}

// recorded reports whether the run of Job name is already in the history
// (a Job being deleted may still be listed by the cache).
func recorded(ws *magosv1.Workspace, name string) bool {
	for _, h := range ws.Status.History {
		if h.Job == name {
			return true
		}
	}
	return false
}
