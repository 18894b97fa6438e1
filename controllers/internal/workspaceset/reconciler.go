package workspaceset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/reconciletail"
	"github.com/magos-dev/magos/controllers/internal/rerror"
	"github.com/magos-dev/magos/controllers/internal/workspaceset/setplan"
)

// Finalizer lets a deleted set orphan or delete its Workspaces first.
const Finalizer = "magos.dev/workspaceset"

// FieldManager owns the fields a set's template sets on its Workspaces.
const FieldManager = "magos-workspaceset"

// Reconciler reconciles WorkspaceSets.
type Reconciler struct {
	client.Client
	Events  events.EventRecorder
	Sources setplan.Sources
	// bursts holds, by set UID, when the set last created Workspaces.
	bursts sync.Map
}

// burstInterval is the least time between two bursts of creates of one
// set, however often it is reconciled (each create wakes it).
const burstInterval = time.Second

// Reconcile generates one set's Workspaces in the shared skeleton
// (reconciletail.Reconcile): finalizer, generate and
// render (a refused element stalls the set but only itself is not
// applied, and nothing is removed meanwhile), plan the changes, act,
// status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var obs setplan.Observation
	evs := &reconciletail.EventBuffer{}
	return reconciletail.Reconcile(ctx, r.Client, req, &magosv1.WorkspaceSet{}, reconciletail.Skeleton[*magosv1.WorkspaceSet]{
		Body: func(ctx context.Context, set, _ *magosv1.WorkspaceSet) (ctrl.Result, error) {
			return r.reconcile(ctx, set, &obs, evs)
		},
		Tail: func(set, _ *magosv1.WorkspaceSet) reconciletail.Options {
			return reconciletail.Options{
				Kind:     magosv1.WorkspaceSetKind,
				Status:   func(err error) { setplan.ComputeStatus(set, obs, err) },
				Events:   evs,
				Recorder: r.Events,
			}
		},
	})
}

// reconcile is Reconcile's body: deletion, the finalizer, then the
// Workspaces the set's generators and template ask for.
func (r *Reconciler) reconcile(ctx context.Context, set *magosv1.WorkspaceSet, obs *setplan.Observation, evs *reconciletail.EventBuffer) (ctrl.Result, error) {
	if !set.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, set, evs)
	}
	if controllerutil.AddFinalizer(set, Finalizer) {
		if err := r.Update(ctx, set); err != nil {
			return ctrl.Result{}, err
		}
	}
	desired, refused, err := r.desired(ctx, set)
	if err != nil {
		return ctrl.Result{}, err
	}
	obs.Elements, obs.Refused = len(desired)+len(refused), len(refused)
	owned, others, err := r.live(ctx, set, desired)
	if err != nil {
		return ctrl.Result{}, rerror.Retry(magosv1.ReasonListFailed, err)
	}
	c := setplan.Plan(desired, owned, others, len(refused) > 0)
	if len(c.Conflicts) > 0 {
		return ctrl.Result{}, rerror.Stall(magosv1.ReasonWorkspaceConflict, fmt.Errorf(
			"workspaces %s exist and this set does not own them: rename them or the template; nothing was changed", strings.Join(c.Conflicts, ", ")))
	}
	if wait := r.untilNextBurst(set, len(c.Create) > 0); wait > 0 {
		c.Deferred += len(c.Create)
		c.Create = nil
	}
	for _, d := range c.Create {
		if err := r.apply(ctx, set, d); err != nil {
			return ctrl.Result{}, err
		}
	}
	for _, d := range c.Revert {
		if err := r.apply(ctx, set, d); err != nil {
			return ctrl.Result{}, err
		}
		evs.Eventf(set, nil, corev1.EventTypeWarning, magosv1.ReasonWorkspaceReverted, "Revert",
			"Workspace %s was edited where the template sets it; the template's values were put back", d.Name)
	}
	for _, name := range c.Remove {
		if err := r.release(ctx, set, owned[name], evs); err != nil {
			return ctrl.Result{}, err
		}
		delete(owned, name)
	}
	obs.Owned, obs.Deferred = len(owned)+len(c.Create), c.Deferred
	for _, ws := range owned {
		if conditions.IsTrue(ws, magosv1.ReadyCondition) {
			obs.Ready++
		}
	}
	if c.Deferred > 0 {
		return ctrl.Result{RequeueAfter: burstInterval}, nil
	}
	if len(refused) > 0 {
		return ctrl.Result{}, rerror.Stall(magosv1.ReasonInvalidTemplate, setplan.RefusedError(refused, len(desired)))
	}
	return ctrl.Result{}, nil
}

// untilNextBurst is how long set must wait before it creates again (0:
// now); creating records the burst.
func (r *Reconciler) untilNextBurst(set *magosv1.WorkspaceSet, creating bool) time.Duration {
	if !creating {
		return 0
	}
	now := time.Now()
	if last, ok := r.bursts.Load(set.UID); ok {
		if wait := last.(time.Time).Add(burstInterval).Sub(now); wait > 0 {
			return wait
		}
	}
	r.bursts.Store(set.UID, now)
	return 0
}

// desired renders the template for every element: those that render and
// those refused (setplan.RenderAll), or says why there are no elements: a
// generator error or too many elements, which stall the set and change
// nothing.
func (r *Reconciler) desired(ctx context.Context, set *magosv1.WorkspaceSet) ([]setplan.Rendered, []setplan.Refusal, error) {
	els, err := setplan.Generate(ctx, r.Sources, set)
	var ge setplan.GenerateError
	var tm setplan.TooManyError
	switch {
	case errors.As(err, &ge):
		return nil, nil, rerror.Stall(magosv1.ReasonGeneratorFailed, fmt.Errorf("%s; nothing was changed", ge.Error()))
	case errors.As(err, &tm):
		return nil, nil, rerror.Stall(magosv1.ReasonTooManyElements, fmt.Errorf("%s; nothing was changed", tm.Error()))
	case err != nil:
		return nil, nil, err
	}
	out, refused := setplan.RenderAll(set.Spec.Template, els)
	return out, refused, nil
}

// live returns the Workspaces the set owns, by name, and the names of the
// desired ones that exist without being the set's.
func (r *Reconciler) live(ctx context.Context, set *magosv1.WorkspaceSet, desired []setplan.Rendered) (map[string]*magosv1.Workspace, map[string]bool, error) {
	var list magosv1.WorkspaceList
	if err := r.List(ctx, &list, client.InNamespace(set.Namespace)); err != nil {
		return nil, nil, err
	}
	want := map[string]bool{}
	for _, d := range desired {
		want[d.Name] = true
	}
	owned, others := map[string]*magosv1.Workspace{}, map[string]bool{}
	for i := range list.Items {
		ws := &list.Items[i]
		switch {
		case ownedBy(ws, set):
			owned[ws.Name] = ws
		case want[ws.Name]:
			others[ws.Name] = true
		}
	}
	return owned, others, nil
}

// ownedBy says whether set controls ws.
func ownedBy(ws *magosv1.Workspace, set *magosv1.WorkspaceSet) bool {
	ref := metav1.GetControllerOf(ws)
	return ref != nil && ref.UID == set.UID
}

// apply applies d server-side as the set's field manager, forcing the
// template's fields back where someone else edited them.
func (r *Reconciler) apply(ctx context.Context, set *magosv1.WorkspaceSet, d setplan.Rendered) error {
	raw, err := json.Marshal(d.Spec)
	if err != nil {
		return fmt.Errorf("encoding Workspace %s: %w", d.Name, err)
	}
	var spec any
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("encoding Workspace %s: %w", d.Name, err)
	}
	labels := map[string]any{}
	for k, v := range d.Labels {
		labels[k] = v
	}
	labels[magosv1.WorkspaceSetLabel] = set.Name
	meta := map[string]any{
		"name": d.Name, "namespace": set.Namespace, "labels": labels,
		"ownerReferences": []any{map[string]any{
			"apiVersion": magosv1.GroupVersion.String(), "kind": magosv1.WorkspaceSetKind, "name": set.Name,
			"uid": string(set.UID), "controller": true, "blockOwnerDeletion": true,
		}},
	}
	if len(d.Annotations) > 0 {
		ann := map[string]any{}
		for k, v := range d.Annotations {
			ann[k] = v
		}
		meta["annotations"] = ann
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": magosv1.GroupVersion.String(), "kind": magosv1.WorkspaceKind, "metadata": meta, "spec": spec,
	}}
	if err := r.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		if apierrors.IsInvalid(err) {
			return rerror.Stall(magosv1.ReasonInvalidTemplate, fmt.Errorf("spec.template renders Workspace %s, which the API refuses: %w", d.Name, err))
		}
		return fmt.Errorf("applying Workspace %s: %w", d.Name, err)
	}
	return nil
}

// release lets go of a Workspace no element renders: under deletionPolicy
// Delete it is deleted (its own finalizer runs a gated destroy if it has
// destroyOnDelete); under Orphan it is left with its state and resources,
// no longer owned or labelled by the set.
func (r *Reconciler) release(ctx context.Context, set *magosv1.WorkspaceSet, ws *magosv1.Workspace, evs *reconciletail.EventBuffer) error {
	if set.Spec.DeletionPolicy == magosv1.DeletionDelete {
		if err := r.Delete(ctx, ws); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting Workspace %s: %w", ws.Name, err)
		}
		evs.Eventf(set, nil, corev1.EventTypeNormal, magosv1.ReasonWorkspaceDeleted, "Delete",
			"Workspace %s has no element any more and was deleted (deletionPolicy Delete)", ws.Name)
		return nil
	}
	patch := client.MergeFrom(ws.DeepCopy())
	var refs []metav1.OwnerReference
	for _, ref := range ws.OwnerReferences {
		if ref.UID != set.UID {
			refs = append(refs, ref)
		}
	}
	ws.OwnerReferences = refs
	delete(ws.Labels, magosv1.WorkspaceSetLabel)
	if err := r.Patch(ctx, ws, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("orphaning Workspace %s: %w", ws.Name, err)
	}
	evs.Eventf(set, nil, corev1.EventTypeNormal, magosv1.ReasonWorkspaceOrphaned, "Orphan",
		"Workspace %s has no element any more and was left in place with its state and resources (deletionPolicy Orphan)", ws.Name)
	return nil
}

// finalize releases every Workspace of a deleted set under its deletion
// policy, then lets the set go.
func (r *Reconciler) finalize(ctx context.Context, set *magosv1.WorkspaceSet, evs *reconciletail.EventBuffer) error {
	if !controllerutil.ContainsFinalizer(set, Finalizer) {
		return nil
	}
	owned, _, err := r.live(ctx, set, nil)
	if err != nil {
		return err
	}
	for _, ws := range owned {
		if err := r.release(ctx, set, ws, evs); err != nil {
			return err
		}
	}
	r.bursts.Delete(set.UID)
	controllerutil.RemoveFinalizer(set, Finalizer)
	return r.Update(ctx, set)
}

// sourceReader implements setplan.Sources on the cluster.
type sourceReader struct {
	client client.Reader
	trees  treeReader
}

// treeReader reads an artifact's directories.
type treeReader interface {
	Dirs(ctx context.Context, url, digest string) ([]string, error)
}

func (s sourceReader) Dirs(ctx context.Context, namespace string, ref magosv1.SourceReference) ([]string, error) {
	if ref.Namespace != "" && ref.Namespace != namespace {
		return nil, fmt.Errorf("%s %s/%s: a set reads sources of its own namespace only", ref.Kind, ref.Namespace, ref.Name)
	}
	art, err := fluxsource.FetchRef(ctx, s.client, ref.Kind, namespace, ref.Name)
	if err != nil {
		return nil, err
	}
	return s.trees.Dirs(ctx, art.URL, art.Digest)
}

func (s sourceReader) Namespaces(ctx context.Context, selector *metav1.LabelSelector) ([]corev1.Namespace, error) {
	if selector == nil || (len(selector.MatchLabels) == 0 && len(selector.MatchExpressions) == 0) {
		return nil, nil
	}
	sel, err := metav1.LabelSelectorAsSelector(selector)
	if err != nil {
		return nil, fmt.Errorf("namespaces.selector: %w", err)
	}
	var list corev1.NamespaceList
	if err := s.client.List(ctx, &list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	return list.Items, nil
}
