package rollout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/notify"
	"github.com/magos-dev/magos/controllers/internal/reconciletail"
	"github.com/magos-dev/magos/controllers/internal/rerror"
	"github.com/magos-dev/magos/controllers/internal/rollout/progress"
)

// Reconciler reconciles Rollouts. It reads Workspaces and Flux sources
// through the manager's cache and writes only Rollout status.
type Reconciler struct {
	client.Client
	Events events.EventRecorder
}

// Reconcile drives one Rollout in the shared skeleton
// (reconciletail.Reconcile): reconcile's steps, then status, events and
// metrics.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obs := progress.Observation{}
	return reconciletail.Reconcile(ctx, r.Client, req, &magosv1.Rollout{}, reconciletail.Skeleton[*magosv1.Rollout]{
		Body: func(ctx context.Context, ro, _ *magosv1.Rollout) (ctrl.Result, error) {
			return r.reconcile(ctx, ro, &obs)
		},
		Tail: func(ro, base *magosv1.Rollout) reconciletail.Options {
			return reconciletail.Options{
				Kind:   magosv1.RolloutKind,
				Status: func(err error) { obs.Err = err; progress.ComputeStatus(ro, obs) },
				// Stages carry state across reconciles (admission,
				// completion), so a reconcile that read a stale Rollout
				// must retry, not overwrite.
				OptimisticLock: true,
				AfterPatch:     func() { r.recordTransitions(base, ro) },
			}
		},
	})
}

// reconcile is Reconcile's body: deletion, then governing check → staging
// → source revision → stage progress.
func (r *Reconciler) reconcile(ctx context.Context, ro *magosv1.Rollout, obs *progress.Observation) (ctrl.Result, error) {
	if !ro.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if err := r.checkGoverning(ctx, ro); err != nil {
		return ctrl.Result{}, err
	}
	var list magosv1.WorkspaceList
	if err := r.List(ctx, &list, client.InNamespace(ro.Namespace), client.MatchingFields{projectRefIndex: ro.Spec.ProjectRef.Name}); err != nil {
		return ctrl.Result{}, rerror.Retry(magosv1.ReasonListFailed, fmt.Errorf("listing the Project's Workspaces: %w", err))
	}
	staged, err := stageWorkspaces(ro.Spec.Stages, list.Items)
	if err != nil {
		return ctrl.Result{}, rerror.Stall(magosv1.InvalidSpecReason, err)
	}
	ro.Status.UnstagedWorkspaces = staged.Unstaged
	switch len(staged.Sources) {
	case 0:
		return ctrl.Result{}, rerror.Wait(magosv1.ReasonNoWorkspaces, fmt.Sprintf("Project %s has no Workspaces yet", ro.Spec.ProjectRef.Name), 0)
	case 1:
	default:
		return ctrl.Result{}, rerror.Stall(magosv1.ReasonMixedSources, fmt.Errorf(
			"the Workspaces of Project %s read %d sources (%s); a Rollout rolls out the revisions of one source",
			ro.Spec.ProjectRef.Name, len(staged.Sources), strings.Join(staged.Sources, ", ")))
	}
	ro.Status.Source = staged.Sources[0]
	revision, err := r.sourceRevision(ctx, staged.Sources[0])
	var notReady fluxsource.NotReadyError
	if errors.As(err, &notReady) {
		return ctrl.Result{}, rerror.Wait(magosv1.ReasonSourceNotReady, notReady.Msg, 0)
	}
	if err != nil {
		return ctrl.Result{}, rerror.Retry(magosv1.ReasonSourceNotReady, err)
	}

	o := progress.Facts{Revision: revision, Now: time.Now(), Members: make([][]progress.Member, len(staged.Stages))}
	o.Aborted = ro.Annotations[magosv1.AbortAnnotation] == revision
	obs.Aborted = o.Aborted
	for i, wss := range staged.Stages {
		for _, ws := range wss {
			o.Members[i] = append(o.Members[i], progress.MemberOf(ws, revision))
		}
	}
	res := progress.Stages(ro, o)
	ro.Status.Revision, ro.Status.Stages = revision, res.Stages
	if res.RequeueAfter > 0 {
		return ctrl.Result{RequeueAfter: res.RequeueAfter}, nil
	}
	return ctrl.Result{}, nil
}

// checkGoverning stalls a Rollout that is not the one governing its
// Project (an older Rollout is attached to it) and clears its stages.
func (r *Reconciler) checkGoverning(ctx context.Context, ro *magosv1.Rollout) error {
	var list magosv1.RolloutList
	if err := r.List(ctx, &list, client.InNamespace(ro.Namespace), client.MatchingFields{projectRefIndex: ro.Spec.ProjectRef.Name}); err != nil {
		return rerror.Retry(magosv1.ReasonListFailed, fmt.Errorf("listing Rollouts: %w", err))
	}
	if gov := magosv1.GoverningRollout(list.Items, ro.Spec.ProjectRef.Name); gov != nil && gov.Name != ro.Name {
		ro.Status.Stages, ro.Status.Revision, ro.Status.UnstagedWorkspaces = nil, "", nil
		return rerror.Stall(magosv1.ReasonConflictingRollout, fmt.Errorf("rollout %s already governs Project %s; this Rollout admits nothing", gov.Name, ro.Spec.ProjectRef.Name))
	}
	return nil
}

// sourceRevision reads the artifact revision of the source named by key.
func (r *Reconciler) sourceRevision(ctx context.Context, key string) (string, error) {
	kind, rest, _ := strings.Cut(key, "/")
	ns, name, _ := strings.Cut(rest, "/")
	src := fluxsource.NewObject(kind)
	if err := r.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, src); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return "", fluxsource.NotReadyError{Msg: fmt.Sprintf("%s %s/%s not found", kind, ns, name)}
		}
		return "", err
	}
	rev := fluxsource.ReadArtifact(src).Revision
	if rev == "" {
		return "", fluxsource.NotReadyError{Msg: fmt.Sprintf("%s %s/%s has no artifact yet", kind, ns, name)}
	}
	return rev, nil
}

// recordTransitions emits an event and counts a metric for every stage
// that changed phase or admitted revision, and records the rollout duration
// when the last stage succeeded.
func (r *Reconciler) recordTransitions(base, ro *magosv1.Rollout) {
	before := map[string]magosv1.StageStatus{}
	for _, st := range base.Status.Stages {
		before[st.Name] = st
	}
	for _, st := range ro.Status.Stages {
		b, seen := before[st.Name]
		if seen && b.Phase == st.Phase && b.AdmittedRevision == st.AdmittedRevision {
			continue
		}
		metrics.RecordStageTransition(string(st.Phase))
		eventType := corev1.EventTypeNormal
		if st.Phase == magosv1.StageHalted {
			eventType = corev1.EventTypeWarning
		}
		revision := st.AdmittedRevision
		if revision == "" {
			revision = ro.Status.Revision
		}
		notify.Eventf(r.Events, ro, nil, notify.Meta(notify.RevisionKey, revision, notify.StageKey, st.Name),
			eventType, "Stage"+string(st.Phase), "Promote", "Stage %s: %s", st.Name, st.Message)
	}
	alreadyRolledOut := rolledOut(base) && base.Status.Revision == ro.Status.Revision
	if rolledOut(ro) && !alreadyRolledOut {
		if first := ro.Status.Stages[0].Started; first != nil {
			metrics.RecordRolloutDuration(time.Since(first.Time).Seconds())
		}
	}
}

// rolledOut reports whether every stage of ro succeeded.
func rolledOut(ro *magosv1.Rollout) bool {
	return len(ro.Status.Stages) > 0 && progress.CurrentStage(ro.Status.Stages) == nil
}
