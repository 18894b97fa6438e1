package config

import (
	"fmt"
	"path"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// The guards on which source a Workspace may read. The reconciler applies
// them before it reads the source, and the artifact proxy again before it
// serves a run's artifact, so that a Job someone else made for a refused
// Workspace gets nothing either.

// CheckSourceNamespace refuses ws's sourceRef into another namespace where
// the cluster forbids them (--no-cross-namespace-refs).
func (g *Guards) CheckSourceNamespace(ws *magosv1.Workspace) error {
	if ns := fluxsource.Namespace(ws); g.NoCrossNamespaceRefs && ns != ws.Namespace {
		return rerror.Stall(magosv1.ReasonCrossNamespaceSourceNotAllowed, fmt.Errorf("%s %s/%s is in another namespace; cross-namespace source references are not allowed on this cluster",
			ws.Spec.SourceRef.Kind, ns, ws.Spec.SourceRef.Name))
	}
	return nil
}

// CheckProjectSource refuses ws's source where its Project p's allow-list
// (status.sourceAllowList) does not name it.
func CheckProjectSource(ws *magosv1.Workspace, p *magosv1.Project) error {
	if !SourceAllowed(ws, p) {
		return rerror.Stall(magosv1.ReasonSourceNotAllowed, fmt.Errorf("%s %s/%s is not allowed by Project %s (status.sourceAllowList)",
			ws.Spec.SourceRef.Kind, fluxsource.Namespace(ws), ws.Spec.SourceRef.Name, p.Name))
	}
	return nil
}

// SourceAllowed applies the Project's allow-list; an empty list allows
// sources in the Project's own namespace only.
func SourceAllowed(ws *magosv1.Workspace, p *magosv1.Project) bool {
	kind, ns, name := ws.Spec.SourceRef.Kind, fluxsource.Namespace(ws), ws.Spec.SourceRef.Name
	if len(p.Status.SourceAllowList) == 0 {
		return ns == p.Namespace
	}
	for _, rule := range p.Status.SourceAllowList {
		if globMatch(rule.Kind, kind) && globMatch(rule.Namespace, ns) && globMatch(rule.Name, name) {
			return true
		}
	}
	return false
}

// globMatch matches s against a path.Match pattern; "" and "*" match
// anything, a malformed pattern nothing.
func globMatch(pattern, s string) bool {
	if pattern == "" || pattern == "*" {
		return true
	}
	ok, err := path.Match(pattern, s)
	return err == nil && ok
}
