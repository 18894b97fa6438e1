package workspace

import (
	"context"
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// policyRetryInterval is how long a plan whose policies could not be
// evaluated (PolicyError, a retried reason) waits before they are evaluated
// again.
const policyRetryInterval = 30 * time.Second

// phaseOfRun maps a run phase to the Workspace phase while it runs.
var phaseOfRun = map[string]magosv1.WorkspacePhase{
	magosv1.RunPlan:    magosv1.PhasePlanning,
	magosv1.RunApply:   magosv1.PhaseApplying,
	magosv1.RunDestroy: magosv1.PhaseDestroying,
}

// runPhase is the Workspace phase while a run of phase and mode runs: the
// apply of a destroy plan is Destroying.
func runPhase(phase string, mode magosv1.PlanMode) magosv1.WorkspacePhase {
	if phase == magosv1.RunApply && mode == magosv1.PlanModeDestroy {
		return magosv1.PhaseDestroying
	}
	return phaseOfRun[phase]
}

// runKind names a run in messages: plan, drift plan, destroy plan, apply,
// destroy apply (of a destroy plan) or destroy (without a plan).
func runKind(phase string, mode magosv1.PlanMode, drift bool) string {
	switch {
	case mode == magosv1.PlanModeDestroy:
		return "destroy " + phase
	case drift:
		return "drift " + phase
	}
	return phase
}

// reconcileRuns records finished runs, releases an explicitly unlocked
// state lock and starts the next run the Workspace needs: a plan when the
// revision or inputs changed or a drift check is due, an apply when a plan
// with changes passed policy, is admitted by the governing Rollout (if any)
// and is approved. It decides obs.Phase; computeStatus turns that into
// Ready/Reconciling/Stalled, Planned, Applied and Drifted.
func (r *Reconciler) reconcileRuns(ctx context.Context, ws *magosv1.Workspace, art artifact, s settings, setDigests []string, project *magosv1.Project, obs *observation) (ctrl.Result, error) {
	inputs := inputsDigest(ws, s, setDigests)
	ws.Status.InputsDigest = inputs
	ws.Status.Source = &magosv1.SourceStatus{URL: art.URL, Revision: art.Revision, Digest: art.Digest}

	busy, err := r.reconcileCurrentRun(ctx, ws, obs)
	if err != nil || busy {
		return ctrl.Result{}, err
	}
	if held := r.reconcileErroredState(ctx, ws, obs); held {
		return ctrl.Result{}, nil
	}
	if held, err := r.reconcileLock(ctx, ws, obs); err != nil || held {
		return ctrl.Result{}, err
	}

	plan, applied := ws.Status.Plan, ws.Status.LastApplied
	if last := failedRun(ws, art.Revision, inputs); last != nil && stalls(last.Reason) {
		obs.Phase, obs.Reason = magosv1.PhaseFailed, last.Reason
		obs.Message = fmt.Sprintf("The %s run %s failed: %s; it is not retried until the revision or inputs change", last.Phase, last.Job, last.Message)
		return ctrl.Result{}, nil
	}
	if wait, ok := r.retryWait(ws, art.Revision, inputs); ok {
		last := ws.Status.History[0]
		obs.Phase, obs.Reason = magosv1.PhaseFailed, orDefault(last.Reason, RunFailedReason)
		obs.Message = fmt.Sprintf("The %s run %s failed: %s; retrying in %s", last.Phase, last.Job, last.Message, wait.Round(time.Second))
		return requeueAfter(wait), nil
	}

	if plan == nil || plan.Revision != art.Revision || plan.InputsDigest != inputs {
		return ctrl.Result{}, r.startRun(ctx, ws, run{Phase: magosv1.RunPlan, Artifact: art}, inputs, s, obs)
	}

	if !plan.HasChanges || (applied != nil && applied.PlanID == plan.ID) {
		if !plan.HasChanges && (applied == nil || applied.Revision != plan.Revision) {
			if waiting, err := r.awaitPromotion(ctx, ws, plan, obs); err != nil || waiting {
				return ctrl.Result{}, err
			}
			ws.Status.LastApplied = &magosv1.AppliedStatus{PlanID: plan.ID, Revision: plan.Revision, Time: metav1.Now()}
			r.event(ws, corev1.EventTypeNormal, NoChangesReason, "Plan %s of revision %s has no changes; nothing to apply", plan.ID, plan.Revision)
		}
		obs.Phase = magosv1.PhaseIdle
		obs.Message = fmt.Sprintf("Applied revision %s", art.Revision)
		return r.scheduleDrift(ctx, ws, art, inputs, s, obs)
	}

	if stop, res, err := r.gatePlan(ctx, ws, project, obs, func(p *magosv1.PlanStatus, verdict string) string {
		return "Plan " + p.ID + " is blocked by policy: " + verdict
	}); stop {
		return res, err
	}

	if waiting, err := r.awaitPromotion(ctx, ws, plan, obs); err != nil || waiting {
		return ctrl.Result{}, err
	}
	if s.Approval == magosv1.ApprovalManual && ws.Spec.ApprovedPlan != plan.ID {
		if ws.Status.Phase != magosv1.PhaseAwaitingApproval {
			r.event(ws, corev1.EventTypeNormal, AwaitingApprovalReason, "Plan %s (%s) awaits approval", plan.ID, PlanSummary(plan))
		}
		obs.Phase, obs.Reason = magosv1.PhaseAwaitingApproval, AwaitingApprovalReason
		obs.Message = fmt.Sprintf("Plan %s (%s) of revision %s awaits approval: set spec.approvedPlan to %q",
			plan.ID, PlanSummary(plan), plan.Revision, plan.ID)
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.startRun(ctx, ws, run{Phase: magosv1.RunApply, Artifact: art, PlanID: plan.ID, PlanDigest: plan.Digest}, inputs, s, obs)
}

// gatePlan runs the policy gate on the pending plan. Unless the plan
// passed, it decides obs and reports stop with the result to return: a
// requeue when the stored plan was not the pending one (it is planned
// again), or Failed with the PolicyPassed reason, stalled or retried, and
// the message blocked words from the plan and the verdict.
func (r *Reconciler) gatePlan(ctx context.Context, ws *magosv1.Workspace, project *magosv1.Project, obs *observation,
	blocked func(p *magosv1.PlanStatus, verdict string) string) (stop bool, res ctrl.Result, err error) {
	obs.Phase = magosv1.PhaseValidating
	passed, err := r.reconcilePolicy(ctx, ws, project)
	if err != nil {
		return true, ctrl.Result{}, err
	}
	plan := ws.Status.Plan
	if plan == nil {
		return true, requeueAfter(time.Second), nil
	}
	if passed {
		return false, ctrl.Result{}, nil
	}
	obs.Phase, obs.Reason = magosv1.PhaseFailed, conditions.Get(ws, magosv1.PolicyPassedCondition).Reason
	obs.Message = blocked(plan, plan.Policy.Message)
	if stalls(obs.Reason) {
		return true, ctrl.Result{}, nil
	}
	obs.Message += fmt.Sprintf("; evaluating again in %s", policyRetryInterval)
	return true, requeueAfter(policyRetryInterval), nil
}

// scheduleDrift starts a drift re-plan of the applied revision once the
// interval since the last plan has passed, or requeues until then.
func (r *Reconciler) scheduleDrift(ctx context.Context, ws *magosv1.Workspace, art artifact, inputs string, s settings, obs *observation) (ctrl.Result, error) {
	if s.Interval <= 0 {
		return ctrl.Result{}, nil
	}
	last := ws.Status.Plan.Time
	if last != nil {
		if wait := time.Until(last.Add(s.Interval)); wait > 0 {
			return requeueAfter(wait), nil
		}
	}
	return ctrl.Result{}, r.startRun(ctx, ws, run{Phase: magosv1.RunPlan, Artifact: art, Drift: true}, inputs, s, obs)
}

// failedRun is the newest run if it failed for this revision and inputs.
func failedRun(ws *magosv1.Workspace, revision, inputs string) *magosv1.RunStatus {
	if len(ws.Status.History) == 0 {
		return nil
	}
	last := &ws.Status.History[0]
	if last.Result != magosv1.ResultFailed || last.Revision != revision || last.InputsDigest != inputs || last.Finished == nil {
		return nil
	}
	return last
}

// retryWait says how long to wait before retrying after the newest run
// failed for the same revision and inputs.
func (r *Reconciler) retryWait(ws *magosv1.Workspace, revision, inputs string) (time.Duration, bool) {
	last := failedRun(ws, revision, inputs)
	if last == nil {
		return 0, false
	}
	wait := time.Until(last.Finished.Add(r.Options.RetryInterval))
	return wait, wait > 0
}

// startRun reserves what the run writes, ensures the runner's identity and
// creates the Job of run rn (or adopts it if it already exists).
func (r *Reconciler) startRun(ctx context.Context, ws *magosv1.Workspace, rn run, inputs string, s settings, obs *observation) error {
	if err := r.Options.Guards.checkRunnerImage(s.Runner.Image); err != nil {
		return err
	}
	if err := r.Options.Guards.checkEngineImage(s); err != nil {
		return err
	}
	st, err := r.reserveRunStorage(ctx, ws)
	// The Role names what was verified, also when something was not: a name
	// that conflicts never enters it, and leaves a Role made before.
	ierr := r.reconcileRunnerIdentity(ctx, ws, s.Runner, st)
	if err != nil {
		return err
	}
	if ierr != nil {
		return rerror.Retry("RunnerIdentityFailed", ierr)
	}
	number := ws.Status.Runs + 1
	rn.ID = runID(string(ws.UID), rn.Phase, strconv.FormatInt(number, 10))
	if rn.Phase == magosv1.RunPlan {
		rn.PlanID = rn.ID
	}
	job := r.buildJob(ws, rn, s)
	job.Annotations[magosv1.InputsDigestAnnotation] = inputs
	job.Annotations[magosv1.RunNumberAnnotation] = strconv.FormatInt(number, 10)
	if rn.Drift {
		job.Annotations[magosv1.DriftAnnotation] = "true"
	}
	if rn.Mode != "" {
		job.Annotations[magosv1.PlanModeAnnotation] = string(rn.Mode)
	}
	if err := controllerutil.SetControllerReference(ws, job, r.Scheme()); err != nil {
		return err
	}
	// A run the cache does not show yet (or whose start a lost status
	// patch forgot) is adopted, never doubled.
	if busy, err := r.adoptLiveRun(ctx, ws, obs); err != nil || busy {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Starting run", "phase", rn.Phase, "mode", rn.Mode, "job", job.Name, "revision", rn.Artifact.Revision, "planID", rn.PlanID)
	if err := r.Create(ctx, job); apierrors.IsAlreadyExists(err) {
		// The same run was started before and its status was lost; the
		// Job that exists is the run, whatever this reconcile built.
		existing, gerr := r.liveJob(ctx, ws, job.Name)
		if gerr != nil {
			return gerr
		}
		if existing == nil {
			return fmt.Errorf("creating %s Job: %s exists and does not belong to Workspace %s", rn.Phase, job.Name, ws.Name)
		}
		ctrl.LoggerFrom(ctx).Info("Adopting the run's Job, which already exists", "job", job.Name)
		r.adopt(ws, existing)
		r.describeRunning(ws, obs)
		return nil
	} else if err != nil {
		return fmt.Errorf("creating %s Job: %w", rn.Phase, err)
	}
	now := metav1.Now()
	ws.Status.Runs = number
	ws.Status.CurrentRun = &magosv1.RunStatus{
		Job: job.Name, Phase: rn.Phase, Result: "Running", Revision: rn.Artifact.Revision,
		InputsDigest: inputs, PlanID: rn.PlanID, Drift: rn.Drift, Mode: rn.Mode, Started: &now,
	}
	r.describeRunning(ws, obs)
	r.event(ws, corev1.EventTypeNormal, string(runPhase(rn.Phase, rn.Mode)), "Started %s run %s for revision %s",
		runKind(rn.Phase, rn.Mode, rn.Drift), job.Name, rn.Artifact.Revision)
	return nil
}

func (r *Reconciler) describeRunning(ws *magosv1.Workspace, obs *observation) {
	cr := ws.Status.CurrentRun
	obs.Phase = runPhase(cr.Phase, cr.Mode)
	obs.Reason = string(obs.Phase)
	obs.Message = fmt.Sprintf("Run %s (%s) of revision %s is in progress", cr.Job, runKind(cr.Phase, cr.Mode, cr.Drift), cr.Revision)
	if cr.Mode == magosv1.PlanModeDestroy {
		obs.Message += "; the Workspace is being deleted"
	}
}

// reconcileCurrentRun adopts a running Job (also one started before a
// controller restart) and records the result of a finished one. It reports
// whether a run is still in progress.
func (r *Reconciler) reconcileCurrentRun(ctx context.Context, ws *magosv1.Workspace, obs *observation) (bool, error) {
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(ws.Namespace), client.MatchingLabels{magosv1.WorkspaceLabel: ws.Name}); err != nil {
		return false, err
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		if !metav1.IsControlledBy(job, ws) || job.DeletionTimestamp != nil || recorded(ws, job.Name) {
			continue
		}
		if done, _ := jobFinished(job); !done {
			r.adopt(ws, job)
			if failed, err := r.failOnPullError(ctx, ws, job); err != nil || failed {
				return false, err
			}
			r.describeRunning(ws, obs)
			return true, nil
		}
	}
	cr := ws.Status.CurrentRun
	if cr == nil || cr.Result != "Running" {
		return false, nil
	}
	var job *batchv1.Job
	for i := range jobs.Items {
		if jobs.Items[i].Name == cr.Job {
			job = &jobs.Items[i]
		}
	}
	if job == nil {
		// The cache may not have seen the Job yet: only a live read says
		// it is gone.
		var err error
		if job, err = r.liveJob(ctx, ws, cr.Job); err != nil {
			return false, err
		}
		if job != nil {
			if done, _ := jobFinished(job); !done {
				r.describeRunning(ws, obs)
				return true, nil
			}
		}
	}
	if job == nil || job.DeletionTimestamp != nil {
		// A deleted Job's Pod may still be stopping (writing state,
		// releasing the lock): the run ends when its Pod does.
		pod, err := r.livePod(ctx, ws, client.MatchingLabels{"job-name": cr.Job})
		if err != nil {
			return false, err
		}
		if pod != nil {
			r.describeRunning(ws, obs)
			return true, nil
		}
		if job != nil {
			if done, _ := jobFinished(job); !done {
				job = nil
			}
		}
	}
	return false, r.recordResult(ctx, ws, job)
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

// adopt points status.currentRun at a running Job found in the cluster.
func (r *Reconciler) adopt(ws *magosv1.Workspace, job *batchv1.Job) {
	if cr := ws.Status.CurrentRun; cr != nil && cr.Job == job.Name {
		return
	}
	n, _ := strconv.ParseInt(job.Annotations[magosv1.RunNumberAnnotation], 10, 64)
	ws.Status.Runs = max(ws.Status.Runs, n)
	started := job.CreationTimestamp
	ws.Status.CurrentRun = &magosv1.RunStatus{
		Job: job.Name, Phase: job.Labels[magosv1.PhaseLabel], Result: "Running",
		Revision: job.Annotations[magosv1.RevisionAnnotation], InputsDigest: job.Annotations[magosv1.InputsDigestAnnotation],
		PlanID: job.Annotations[magosv1.PlanIDAnnotation], Drift: job.Annotations[magosv1.DriftAnnotation] == "true",
		Mode: magosv1.PlanMode(job.Annotations[magosv1.PlanModeAnnotation]), Started: &started,
	}
}

// jobFinished reports whether job finished and whether it succeeded.
func jobFinished(job *batchv1.Job) (done, succeeded bool) {
	for _, c := range job.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, true
		case batchv1.JobFailed:
			return true, false
		}
	}
	return false, false
}

func jobFailureMessage(job *batchv1.Job) string {
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return fmt.Sprintf("Job failed (%s): %s", c.Reason, c.Message)
		}
	}
	return "Job failed"
}
