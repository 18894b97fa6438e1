package project

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/index"
	"github.com/magos-dev/magos/controllers/internal/reconciletail"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// Reconciler reconciles Projects. It only reads (member Workspaces and
// shared VariableSets, through the manager's cache) and writes Project
// status: Projects never execute anything.
type Reconciler struct {
	client.Client
	Events events.EventRecorder
}

// Reconcile resolves one Project in the shared skeleton
// (reconciletail.Reconcile): deletion, then the sub-reconcilers in order:
// reconcileMembers, reconcileVariableSets, reconcileSpec. Projects have no
// finalizer (there is nothing to clean up) and no suspend.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obs := observation{}
	return reconciletail.Reconcile(ctx, r.Client, req, &magosv1.Project{}, reconciletail.Skeleton[*magosv1.Project]{
		Body: func(ctx context.Context, p, _ *magosv1.Project) (ctrl.Result, error) {
			if !p.DeletionTimestamp.IsZero() {
				return ctrl.Result{}, nil
			}
			for _, sub := range []func(context.Context, *magosv1.Project, *observation) error{
				r.reconcileMembers,
				r.reconcileVariableSets,
				r.reconcileSpec,
			} {
				if err := sub(ctx, p, &obs); err != nil {
					return ctrl.Result{}, err
				}
			}
			return ctrl.Result{}, nil
		},
		// Status is a pure function of what this reconcile observed, so an
		// unchanged status is not written and a stale read needs no lock:
		// the next reconcile observes again.
		Tail: func(p, base *magosv1.Project) reconciletail.Options {
			return reconciletail.Options{
				Kind:   magosv1.ProjectKind,
				Status: func(err error) { obs.Err = err; computeStatus(p, obs) },
				AfterPatch: func() {
					reconciletail.RecordConditionTransition(r.Events, base, p, magosv1.ReadyCondition)
					reconciletail.RecordConditionTransition(r.Events, base, p, VariableSetsReadyCondition)
				},
			}
		},
	})
}

// reconcileMembers counts the member Workspaces (status.workspaces). A
// failed list sets Reconciling with ListFailed.
func (r *Reconciler) reconcileMembers(ctx context.Context, p *magosv1.Project, obs *observation) error {
	var list magosv1.WorkspaceList
	if err := r.List(ctx, &list, client.InNamespace(p.Namespace), client.MatchingFields{index.WorkspaceProjectRef: p.Name}); err != nil {
		return rerror.Retry(magosv1.ReasonListFailed, fmt.Errorf("listing member Workspaces: %w", err))
	}
	ru := rollup(list.Items)
	obs.Rollup = &ru
	return nil
}

// reconcileVariableSets looks up the shared VariableSets and sets
// VariableSetsReady; a missing or not-Ready one does not make the Project
// not Ready.
func (r *Reconciler) reconcileVariableSets(ctx context.Context, p *magosv1.Project, obs *observation) error {
	obs.VariableSets = make([]variableSetState, 0, len(p.Spec.VariableSetRefs))
	for _, ref := range p.Spec.VariableSetRefs {
		vs := &magosv1.VariableSet{}
		err := r.Get(ctx, types.NamespacedName{Namespace: p.Namespace, Name: ref.Name}, vs)
		switch {
		case apierrors.IsNotFound(err):
			vs = nil
		case err != nil:
			return rerror.Retry(magosv1.ReasonListFailed, fmt.Errorf("reading VariableSet %s: %w", ref.Name, err))
		}
		obs.VariableSets = append(obs.VariableSets, variableSetStateOf(ref.Name, vs))
	}
	obs.VariableSetsObserved = true
	return nil
}

// reconcileSpec resolves what members inherit (Ready=True); an invalid
// policy selector or allow-list glob stalls with InvalidSpec.
func (r *Reconciler) reconcileSpec(_ context.Context, p *magosv1.Project, obs *observation) error {
	res, err := resolveSpec(&p.Spec)
	if err != nil {
		return rerror.Stall(magosv1.InvalidSpecReason, err)
	}
	obs.Resolved = res
	return nil
}
