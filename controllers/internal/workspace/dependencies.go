package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/index"
	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
)

// gatherDependencies reads ws's dependencies from the cache (and, while ws
// is deleted, the Workspaces that depend on it).
func (r *Reconciler) gatherDependencies(ctx context.Context, ws *magosv1.Workspace, deleting bool) (decide.DependencyFacts, error) {
	var d decide.DependencyFacts
	if deleting {
		var list magosv1.WorkspaceList
		if err := r.List(ctx, &list, client.InNamespace(ws.Namespace), client.MatchingFields{index.WorkspaceDependsOn: ws.Name}, client.UnsafeDisableDeepCopy); err != nil {
			return d, fmt.Errorf("listing the Workspaces that depend on this one: %w", err)
		}
		for _, o := range list.Items {
			if o.Name != ws.Name {
				d.Dependents = append(d.Dependents, o.Name)
			}
		}
		return d, nil
	}
	if len(ws.Spec.DependsOn) == 0 {
		return d, nil
	}
	seen := map[string]*magosv1.Workspace{ws.Name: ws}
	get := func(name string) (*magosv1.Workspace, error) {
		if o, ok := seen[name]; ok {
			return o, nil
		}
		o := &magosv1.Workspace{}
		err := r.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: name}, o)
		if apierrors.IsNotFound(err) {
			o = nil
		} else if err != nil {
			return nil, err
		}
		seen[name] = o
		return o, nil
	}
	for _, ref := range ws.Spec.DependsOn {
		dep, err := get(ref.Name)
		if err != nil {
			return d, fmt.Errorf("reading Workspace %s: %w", ref.Name, err)
		}
		revision, err := r.sourceRevisionOf(ctx, dep)
		if err != nil {
			return d, err
		}
		d.States = append(d.States, dependencyState(ref.Name, dep, revision, r.Shard))
	}
	cycle, err := findCycle(ws.Name, get)
	d.Cycle = cycle
	return d, err
}

// sourceRevisionOf is the revision of dep's source artifact now, "" when
// dep does not exist or its source has no artifact.
func (r *Reconciler) sourceRevisionOf(ctx context.Context, dep *magosv1.Workspace) (string, error) {
	if dep == nil {
		return "", nil
	}
	a, err := fluxsource.Fetch(ctx, r.Client, dep)
	var notReady fluxsource.NotReadyError
	if errors.As(err, &notReady) {
		return "", nil
	}
	return a.Revision, err
}

// dependencyState is what a dependent in shard (nil: unsharded) sees of
// dependency dep (nil: not in the cache) whose source's artifact is at
// sourceRevision: it must be Ready
// with that revision applied. A Ready dependency that has not seen a new
// revision of its source yet is not ready: its dependents, often on the
// same source, would plan against outputs about to change. A plan-only
// dependency never applies; Ready is enough.
func dependencyState(name string, dep *magosv1.Workspace, sourceRevision string, shard labels.Selector) magosv1.DependencyStatus {
	st := magosv1.DependencyStatus{Name: name}
	if dep == nil {
		st.Message = fmt.Sprintf("Workspace %s %s", name, workspaceMissing(shard))
		return st
	}
	switch ready := conditions.Get(dep, magosv1.ReadyCondition); {
	case dep.Status.ObservedGeneration != dep.Generation || ready == nil:
		st.Message = fmt.Sprintf("Workspace %s is not reconciled yet", name)
	case !dep.DeletionTimestamp.IsZero():
		st.Message = fmt.Sprintf("Workspace %s is being deleted", name)
	case ready.Status != "True":
		st.Message = fmt.Sprintf("Workspace %s is %s: %s", name, decide.OrDefault(string(dep.Status.Phase), "not Ready"), ready.Message)
	case dep.Spec.Mode == magosv1.ModePlanOnly:
		st.Ready = true
	case sourceRevision == "":
		st.Message = fmt.Sprintf("Workspace %s's source has no artifact", name)
	case appliedRevision(dep) != sourceRevision:
		st.Message = fmt.Sprintf("Workspace %s has not applied revision %s of its source yet", name, sourceRevision)
	default:
		st.Ready = true
	}
	return st
}

// findCycle follows spec.dependsOn from start, depth first, and returns the
// first path that leads back to start ("a", "b", "a"), or nil. get reads a
// Workspace by name (nil when it does not exist).
func findCycle(start string, get func(string) (*magosv1.Workspace, error)) ([]string, error) {
	visited := map[string]bool{}
	var path []string
	var walk func(name string) ([]string, error)
	walk = func(name string) ([]string, error) {
		o, err := get(name)
		if err != nil || o == nil {
			return nil, err
		}
		path = append(path, name)
		defer func() { path = path[:len(path)-1] }()
		for _, ref := range o.Spec.DependsOn {
			if ref.Name == start {
				return append(slices.Clone(path), start), nil
			}
			if visited[ref.Name] {
				continue
			}
			visited[ref.Name] = true
			if c, err := walk(ref.Name); err != nil || c != nil {
				return c, err
			}
		}
		return nil, nil
	}
	return walk(start)
}

// readinessChanged passes Workspace events that can change what a
// dependent or a dependency decides: creation, deletion, and updates of
// the Ready condition, the phase (a dependent's status names it), the
// generation, the deletion timestamp, the applied revision or the outputs
// written (names and versions).
var readinessChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, after := e.ObjectOld.(*magosv1.Workspace), e.ObjectNew.(*magosv1.Workspace)
		b, a := conditions.Get(before, magosv1.ReadyCondition), conditions.Get(after, magosv1.ReadyCondition)
		sameReady := (b == nil) == (a == nil) && (b == nil || b.Status == a.Status)
		return !sameReady || before.Status.ObservedGeneration != after.Status.ObservedGeneration ||
			before.DeletionTimestamp.IsZero() != after.DeletionTimestamp.IsZero() ||
			appliedRevision(before) != appliedRevision(after) || before.Status.Phase != after.Status.Phase ||
			!slices.Equal(before.Status.Outputs, after.Status.Outputs) || !slices.Equal(before.Status.OutputVersions, after.Status.OutputVersions)
	},
}

// appliedRevision is the revision ws last applied, "" when none.
func appliedRevision(ws *magosv1.Workspace) string {
	if ws.Status.LastApplied == nil {
		return ""
	}
	return ws.Status.LastApplied.Revision
}

// workspaceMissing completes "Workspace <name> ..." for a Workspace the
// cache does not hold. In a shard (a --watch-label-selector) the cache
// holds this shard's Workspaces only, so the Workspace may exist in
// another shard: the controller does not read it there (that would be an
// uncached read per reconcile) and says so instead.
func workspaceMissing(shard labels.Selector) string {
	if shard == nil {
		return "does not exist"
	}
	return fmt.Sprintf("does not exist or is not in this controller's shard (%s); keep a Workspace and its dependencies in one shard (label %s)",
		shard, setup.ShardKeyLabel)
}
