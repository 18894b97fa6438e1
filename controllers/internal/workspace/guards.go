package workspace

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// checkGuards applies the guards that depend on the Workspace's spec and
// namespace alone: a Project claiming the namespace, a required Project and
// cross-namespace sources. A
// refused Workspace stalls.
func (r *Reconciler) checkGuards(ctx context.Context, ws *magosv1.Workspace) error {
	g := r.Options.Guards
	if err := r.checkNamespaceClaim(ctx, ws); err != nil {
		return err
	}
	if ws.Spec.ProjectRef == nil {
		required, err := r.projectRequired(ctx, ws.Namespace)
		if err != nil {
			return err
		}
		if required {
			return rerror.Stall(magosv1.ReasonProjectRequired, fmt.Errorf("namespace %s requires every Workspace to name a Project (spec.projectRef)", ws.Namespace))
		}
	}
	return g.CheckSourceNamespace(ws)
}

// projectRequired reports whether Workspaces in namespace must name a
// Project. The Namespace is read uncached, and only when a namespace
// selector is set.
func (r *Reconciler) projectRequired(ctx context.Context, namespace string) (bool, error) {
	g := r.Options.Guards
	if g.RequireProject {
		return true, nil
	}
	return r.namespaceMatches(ctx, g.RequireProjectIn, namespace)
}

// namespacedPoliciesAllowed reports whether the NamespacedValidatingPolicies
// of namespace may gate its Workspaces' plans. The Namespace is read
// uncached, and only when a namespace selector is set.
func (r *Reconciler) namespacedPoliciesAllowed(ctx context.Context, namespace string) (bool, error) {
	return r.namespaceMatches(ctx, r.Options.Guards.NamespacedPoliciesIn, namespace)
}

// namespaceMatches reports whether the labels of namespace match sel, a
// guard's namespace selector; nil or empty matches none. The Namespace is
// read uncached, and only when sel selects something.
func (r *Reconciler) namespaceMatches(ctx context.Context, sel labels.Selector, namespace string) (bool, error) {
	if sel == nil || sel.Empty() {
		return false, nil
	}
	ns := &corev1.Namespace{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Name: namespace}, ns); err != nil {
		return false, fmt.Errorf("reading namespace %s: %w", namespace, err)
	}
	return sel.Matches(labels.Set(ns.Labels)), nil
}

// checkNamespaceClaim refuses ws unless it names the Project that claims
// its namespace, if one does. Projects are read from the cache; a Project
// being deleted still claims the namespace.
func (r *Reconciler) checkNamespaceClaim(ctx context.Context, ws *magosv1.Workspace) error {
	var projects magosv1.ProjectList
	if err := r.List(ctx, &projects, client.InNamespace(ws.Namespace)); err != nil {
		return fmt.Errorf("listing the Projects of namespace %s: %w", ws.Namespace, err)
	}
	return namespaceClaimRefused(ws, claimants(projects.Items))
}

// claimants are the names of the Projects that claim their namespace,
// sorted.
func claimants(projects []magosv1.Project) []string {
	var names []string
	for _, p := range projects {
		if p.Spec.Members == magosv1.MembersNamespace {
			names = append(names, p.Name)
		}
	}
	sort.Strings(names)
	return names
}

// namespaceClaimRefused is the stall of ws in a namespace claimed by the
// Projects claims, or nil.
func namespaceClaimRefused(ws *magosv1.Workspace, claims []string) error {
	named := ""
	if ws.Spec.ProjectRef != nil {
		named = ws.Spec.ProjectRef.Name
	}
	switch {
	case len(claims) == 0:
		return nil
	case len(claims) > 1:
		return rerror.Stall(magosv1.ReasonProjectClaimsNamespace, fmt.Errorf(
			"namespace %s is claimed by Projects %s (spec.members: Namespace); no Workspace runs there until one claims it",
			ws.Namespace, strings.Join(claims, ", ")))
	case named == claims[0]:
		return nil
	case named == "":
		return rerror.Stall(magosv1.ReasonProjectClaimsNamespace, fmt.Errorf(
			"namespace %s belongs to Project %s (spec.members: Namespace): set spec.projectRef.name to %s", ws.Namespace, claims[0], claims[0]))
	default:
		return rerror.Stall(magosv1.ReasonProjectClaimsNamespace, fmt.Errorf(
			"namespace %s belongs to Project %s (spec.members: Namespace), not %s: set spec.projectRef.name to %s", ws.Namespace, claims[0], named, claims[0]))
	}
}
