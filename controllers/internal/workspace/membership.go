package workspace

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

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
