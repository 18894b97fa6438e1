package workspace

import (
	"context"
	"errors"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/configtree/treecache"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/reconciletail"
	"github.com/magos-dev/magos/controllers/internal/rerror"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
	"github.com/magos-dev/magos/controllers/internal/workspace/schedule"
)

// DestroyFinalizer holds a Workspace with destroyOnDelete until its destroy run finished.
const DestroyFinalizer = "magos.dev/destroy"

// UnlockAnnotation and StateRestoredAnnotation are the API's: a person's
// release of a stuck lock and of state that was not written back.
const (
	UnlockAnnotation        = magosv1.UnlockAnnotation
	StateRestoredAnnotation = magosv1.StateRestoredAnnotation
)

// Reconciler reconciles Workspaces.
type Reconciler struct {
	client.Client
	// APIReader reads uncached objects (Pods of finished runs).
	APIReader client.Reader
	Events    events.EventRecorder
	Options   config.Options
	// Policies evaluates plans against Kyverno ValidatingPolicies.
	Policies PolicyEvaluator
	// Runs bounds and orders the runs in progress; nil starts every run
	// when it is due.
	Runs *schedule.Scheduler
	// Shard selects the Workspaces this controller owns
	// (--watch-label-selector); nil when unsharded. The cache holds only
	// those.
	Shard labels.Selector
	// Trees reads artifacts for what each Workspace reads in them, so a
	// revision that changes none of it is not planned; nil plans every
	// revision.
	Trees *treecache.Cache

	// reports is set in the copy of the Reconciler each reconcile works
	// with: events and metrics wait there for the status patch.
	reports *reports
}

// Reconcile drives one Workspace in the shared skeleton
// (reconciletail.Reconcile): deletion, finalizer, suspend, then inputs →
// source → runs (gather facts, decide, act); then, whatever they returned,
// status, and after its patch the events and metrics.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rr := r.forReconcile()
	obs := decide.Observation{}
	return reconciletail.Reconcile(ctx, r.Client, req, &magosv1.Workspace{}, reconciletail.Skeleton[*magosv1.Workspace]{
		Gone: func() { r.Runs.Forget(req.String()) },
		Body: func(ctx context.Context, ws, base *magosv1.Workspace) (ctrl.Result, error) {
			return rr.reconcile(ctx, ws, base, &obs)
		},
		Tail: func(ws, base *magosv1.Workspace) reconciletail.Options {
			return reconciletail.Options{
				Kind: magosv1.WorkspaceKind,
				Status: func(err error) {
					obs.Err = err
					decide.ComputeStatus(ws, obs)
					rr.notes(ws, decide.TransitionNotes(base, ws, obs.Decision))
				},
				// Status carries the run state (current run, plan,
				// history): a reconcile that read a stale cached Workspace
				// must retry, not overwrite it.
				OptimisticLock: true,
				Events:         &rr.reports.events,
				Recorder:       r.Events,
				AfterPatch: func() {
					r.Runs.Settle(ws, obs.Decision)
					rr.reports.afterPatch()
				},
			}
		},
	})
}

// reconcile is Reconcile's body, before the status is computed and written.
func (r *Reconciler) reconcile(ctx context.Context, ws, base *magosv1.Workspace, obs *decide.Observation) (ctrl.Result, error) {
	if !ws.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, ws, obs)
	}
	if err := r.reconcileFinalizer(ctx, ws); err != nil {
		return ctrl.Result{}, err
	}
	base.ResourceVersion, base.Finalizers = ws.ResourceVersion, ws.Finalizers
	if err := r.tightenRunnerRole(ctx, ws); err != nil {
		return ctrl.Result{}, rerror.Retry(magosv1.ReasonRunnerIdentityFailed, err)
	}
	if ws.Spec.Suspend {
		obs.Suspended = true
		return ctrl.Result{}, nil
	}

	// Inputs first: the cluster-level guards refuse a Workspace before its
	// source (perhaps in a namespace it may not use) is read.
	in, err := r.resolveInputs(ctx, ws)
	if err != nil {
		return ctrl.Result{}, err
	}

	art, err := fluxsource.Fetch(ctx, r.Client, ws)
	var notReady fluxsource.NotReadyError
	if errors.As(err, &notReady) {
		return ctrl.Result{}, rerror.Wait(magosv1.ReasonSourceNotReady, notReady.Msg, 0)
	}
	if err != nil {
		return ctrl.Result{}, rerror.Retry(magosv1.ReasonSourceNotReady, err)
	}
	obs.Revision = art.Revision
	s, err := r.effectiveSettings(ws, in)
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.reconcileRuns(ctx, ws, art, s, in, nil, obs)
}

// reconcileFinalizer keeps the destroy finalizer in step with destroyOnDelete.
func (r *Reconciler) reconcileFinalizer(ctx context.Context, ws *magosv1.Workspace) error {
	want := ws.Spec.DestroyOnDelete
	if want == controllerutil.ContainsFinalizer(ws, DestroyFinalizer) {
		return nil
	}
	patch := client.MergeFrom(ws.DeepCopy())
	if want {
		controllerutil.AddFinalizer(ws, DestroyFinalizer)
	} else {
		controllerutil.RemoveFinalizer(ws, DestroyFinalizer)
	}
	return r.Patch(ctx, ws, patch)
}

// removeFinalizer lets a deleted Workspace go.
func (r *Reconciler) removeFinalizer(ctx context.Context, ws *magosv1.Workspace) error {
	if !controllerutil.ContainsFinalizer(ws, DestroyFinalizer) {
		return nil
	}
	patch := client.MergeFrom(ws.DeepCopy())
	controllerutil.RemoveFinalizer(ws, DestroyFinalizer)
	return client.IgnoreNotFound(r.Patch(ctx, ws, patch))
}

// requeueAfter bounds a wait to at least a second.
func requeueAfter(d time.Duration) ctrl.Result {
	return ctrl.Result{RequeueAfter: max(d, time.Second)}
}

// resolveInputs applies the cluster-level guards (those on the effective
// runner among them), resolves the Workspace's Project and variables and
// refuses variables or runner settings that read another Workspace's
// storage.
func (r *Reconciler) resolveInputs(ctx context.Context, ws *magosv1.Workspace) (inputs, error) {
	if err := r.checkGuards(ctx, ws); err != nil {
		return inputs{}, err
	}
	project, err := r.resolveProject(ctx, ws)
	if err != nil {
		return inputs{}, err
	}
	in, err := r.resolveVariables(ctx, ws, project)
	if err != nil {
		return in, err
	}
	in.Runner = runjob.EffectiveRunner(ws, project)
	// The guards on the runner's spec come first: a forbidden setting is
	// refused at once, not after a wait for a Secret it names.
	if err := r.Options.Guards.CheckRunner(ws, &in.Runner); err != nil {
		return in, err
	}
	runnerEnvVars, _ := runjob.RunnerEnv(in.Runner.Env)
	checked, err := r.checkStorageRefs(ctx, ws, append(secretRefs(append(slices.Clone(in.Env), runnerEnvVars...)), runnerSecretRefs(&in.Runner)...))
	in.Env = withoutAbsent(in.Env, checked.Absent)
	in.Runner.Env = runnerEnvWithout(in.Runner.Env, checked.Absent)
	in.OutputReads = outputReads(in.Env, checked.Deps)
	return in, err
}
