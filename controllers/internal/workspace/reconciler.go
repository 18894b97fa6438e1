package workspace

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/policy"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// DestroyFinalizer holds a Workspace with destroyOnDelete until its destroy run finished.
const DestroyFinalizer = "magos.dev/destroy"

// UnlockAnnotation, set to the holder shown in status.lock.holder, releases a
// stuck state lock.
const UnlockAnnotation = "magos.dev/unlock"

// StateRestoredAnnotation, set to the Job shown in status.erroredState.job
// once the state was restored, lets runs start again.
const StateRestoredAnnotation = "magos.dev/state-restored"

// Reconciler reconciles Workspaces.
type Reconciler struct {
	client.Client
	// APIReader reads uncached objects (Pods of finished runs).
	APIReader client.Reader
	Events    events.EventRecorder
	Options   Options
	// Policies evaluates plans against Kyverno ValidatingPolicies.
	Policies *policy.Evaluator
}

// Reconcile drives one Workspace: get, patch base, deferred status patch,
// deletion, finalizer, suspend, then source → inputs → runs.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	log := ctrl.LoggerFrom(ctx)
	ws := &magosv1.Workspace{}
	if err := r.Get(ctx, req.NamespacedName, ws); err != nil {
		if apierrors.IsNotFound(err) {
			metrics.TrackWorkspace(req.String(), "", false)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	base := ws.DeepCopy()
	obs := observation{}

	defer func() {
		obs.Err = retErr
		computeStatus(ws, obs)
		// The optimistic lock makes a reconcile that read a stale cached
		// Workspace fail and retry instead of overwriting newer status.
		// An unchanged status is not written: Rollout changes wake many
		// waiting Workspaces whose status stays the same.
		if !equality.Semantic.DeepEqual(base.Status, ws.Status) {
			patch := client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})
			if err := r.Status().Patch(ctx, ws, patch); err != nil && !apierrors.IsNotFound(err) {
				log.Error(err, "Failed to patch status")
				retErr = errors.Join(retErr, err)
			}
		}
		metrics.TrackWorkspace(req.String(), string(ws.Status.Phase), ws.Status.Lock != nil)
		metrics.RecordReconcile(magosv1.WorkspaceKind, retErr)
		retErr = rerror.ForRuntime(retErr)
	}()

	if !ws.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, ws, &obs)
	}
	if err := r.reconcileFinalizer(ctx, ws); err != nil {
		return ctrl.Result{}, err
	}
	base.ResourceVersion, base.Finalizers = ws.ResourceVersion, ws.Finalizers
	if err := r.tightenRunnerRole(ctx, ws); err != nil {
		return ctrl.Result{}, rerror.Retry("RunnerIdentityFailed", err)
	}
	if ws.Spec.Suspend {
		obs.Suspended = true
		return ctrl.Result{}, nil
	}

	// Inputs first: the cluster-level guards refuse a Workspace before its
	// source (perhaps in a namespace it may not use) is read.
	in, err := r.resolveInputs(ctx, ws)
	var waiting errWaiting
	if errors.As(err, &waiting) {
		obs.WaitingReason, obs.WaitingMessage = waiting.reason, waiting.msg
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}

	art, err := fluxsource.Fetch(ctx, r.Client, ws)
	var notReady fluxsource.NotReadyError
	if errors.As(err, &notReady) {
		obs.WaitingReason, obs.WaitingMessage = SourceNotReadyReason, notReady.Msg
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, rerror.Retry(SourceNotReadyReason, err)
	}
	obs.Revision = art.Revision
	s, err := r.effectiveSettings(ws, in)
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.reconcileRuns(ctx, ws, art, s, in.SetDigests, in.Project, &obs)
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

// resolveInputs applies the cluster-level guards and resolves the
// Workspace's Project and variables.
func (r *Reconciler) resolveInputs(ctx context.Context, ws *magosv1.Workspace) (inputs, error) {
	if err := r.checkGuards(ctx, ws); err != nil {
		return inputs{}, err
	}
	project, err := r.resolveProject(ctx, ws)
	if err != nil {
		return inputs{}, err
	}
	return r.resolveVariables(ctx, ws, project)
}
