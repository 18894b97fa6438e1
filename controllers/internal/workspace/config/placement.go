package config

import (
	"flag"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// systemPriorityPrefix starts the names of Kubernetes's own priority
// classes (system-node-critical, system-cluster-critical), which a pattern
// never allows: only a pattern that is the exact name does.
const systemPriorityPrefix = "system-"

// PlacementGuards say where runner Pods may be scheduled and what labels
// and annotations a Workspace may put on them, deny by default: each is a
// list of patterns (path.Match, where * does not cross a /, so "*" is any
// key without a prefix and "example.com/*" any key under that prefix) and
// an empty list allows none. What they keep out: runner Pods tolerating
// their way onto control-plane or other tenants' nodes, preempting with
// system-node-critical, wearing labels other NetworkPolicies trust, or
// annotations that steer mutating webhooks (sidecar images, mesh egress,
// Vault roles).
type PlacementGuards struct {
	// PriorityClasses a runner's priorityClassName may match.
	PriorityClasses []string
	// TolerationKeys a runner toleration's key may match. A toleration
	// without a key tolerates every taint and is always refused.
	TolerationKeys []string
	// NodeLabelKeys the keys of a runner's nodeSelector, node affinity
	// terms (metadata.name for matchFields) and Pod affinity topology keys
	// may match.
	NodeLabelKeys []string
	// PodLabelKeys a runner's podLabels keys may match.
	PodLabelKeys []string
	// PodAnnotationKeys a runner's podAnnotations keys may match.
	PodAnnotationKeys []string
}

// BindFlags registers the placement guards' flags on fs.
func (g *PlacementGuards) BindFlags(fs *flag.FlagSet) {
	const patterns = " Comma-separated glob patterns (path.Match: * does not cross /; repeatable); empty allows none."
	fs.Func("allowed-runner-priority-classes", "Priority classes a runner (spec.runner.priorityClassName of a Workspace or Project) may use."+patterns+
		" A system- class (system-node-critical) only when listed by its exact name.", appendPatterns(&g.PriorityClasses))
	fs.Func("allowed-runner-toleration-keys", "Taint keys a runner may tolerate (spec.runner.tolerations)."+patterns+
		" A toleration without a key (every taint) is always refused.", appendPatterns(&g.TolerationKeys))
	fs.Func("allowed-runner-node-label-keys", "Node label keys a runner may select nodes by (spec.runner.nodeSelector, affinity node terms, "+
		"Pod affinity topology keys; metadata.name for matchFields)."+patterns, appendPatterns(&g.NodeLabelKeys))
	fs.Func("allowed-runner-pod-label-keys", "Label keys a runner may put on its Pods (spec.runner.podLabels)."+patterns, appendPatterns(&g.PodLabelKeys))
	fs.Func("allowed-runner-pod-annotation-keys", "Annotation keys a runner may put on its Pods (spec.runner.podAnnotations)."+patterns, appendPatterns(&g.PodAnnotationKeys))
}

// Validate refuses a pattern that does not parse.
func (g *PlacementGuards) Validate() error {
	lists := g.lists()
	for _, flagName := range slices.Sorted(maps.Keys(lists)) {
		for _, p := range lists[flagName] {
			if _, err := path.Match(p, ""); err != nil {
				return fmt.Errorf("--%s: %q is not a valid pattern: %w", flagName, p, err)
			}
		}
	}
	return nil
}

// lists are the pattern lists by flag name.
func (g *PlacementGuards) lists() map[string][]string {
	return map[string][]string{
		"allowed-runner-priority-classes":    g.PriorityClasses,
		"allowed-runner-toleration-keys":     g.TolerationKeys,
		"allowed-runner-node-label-keys":     g.NodeLabelKeys,
		"allowed-runner-pod-label-keys":      g.PodLabelKeys,
		"allowed-runner-pod-annotation-keys": g.PodAnnotationKeys,
	}
}

// matchesAny reports whether s matches one of patterns.
func matchesAny(patterns []string, s string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool {
		ok, err := path.Match(p, s)
		return err == nil && ok
	})
}

// allowedList renders patterns for a message.
func allowedList(patterns []string) string {
	if len(patterns) == 0 {
		return "none"
	}
	return strings.Join(patterns, ", ")
}

// ownRunner is the Workspace's own spec.runner, empty when it sets none:
// what it set, as opposed to what its Project's defaults gave it.
func ownRunner(ws *magosv1.Workspace) *magosv1.RunnerSpec {
	if ws.Spec.Runner == nil {
		return &magosv1.RunnerSpec{}
	}
	return ws.Spec.Runner
}

// refusals collects what a guard refuses, each naming the field it came
// from: the Workspace's spec.runner or its Project's defaults.runner.
type refusals struct {
	ws   *magosv1.Workspace
	msgs []string
}

// add records a refused value of field; own says the Workspace set it
// (else it came from the Project's defaults).
func (r *refusals) add(field string, own bool, format string, a ...any) {
	where := "spec.runner." + field
	if !own && r.ws.Spec.ProjectRef != nil {
		where = "Project " + r.ws.Spec.ProjectRef.Name + " defaults.runner." + field
	}
	r.msgs = append(r.msgs, where+": "+fmt.Sprintf(format, a...))
}

// err is the stall of reason for what was refused, nil when nothing was.
func (r *refusals) err(reason string) error {
	if len(r.msgs) == 0 {
		return nil
	}
	return rerror.Stall(reason, fmt.Errorf("not allowed on this cluster: %s", strings.Join(r.msgs, "; ")))
}

// CheckPlacement refuses a run whose effective runner rs would place its
// Pod where the cluster does not allow: a priority class, a toleration, a
// node label key or a Pod affinity reaching other namespaces.
func (g *PlacementGuards) CheckPlacement(ws *magosv1.Workspace, rs *magosv1.RunnerSpec) error {
	own := ownRunner(ws)
	r := &refusals{ws: ws}
	if pc := rs.PriorityClassName; pc != "" && !g.priorityClassAllowed(pc) {
		r.add("priorityClassName", own.PriorityClassName != "", "priority class %q (allowed: %s)", pc, allowedList(g.PriorityClasses))
	}
	for _, t := range rs.Tolerations {
		switch {
		case t.Key == "":
			r.add("tolerations", own.Tolerations != nil, "a toleration without a key tolerates every taint")
		case !matchesAny(g.TolerationKeys, t.Key):
			r.add("tolerations", own.Tolerations != nil, "toleration key %q (allowed: %s)", t.Key, allowedList(g.TolerationKeys))
		}
	}
	nodeKey := func(field string, set bool, key string) {
		if !matchesAny(g.NodeLabelKeys, key) {
			r.add(field, set, "node label key %q (allowed: %s)", key, allowedList(g.NodeLabelKeys))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(rs.NodeSelector)) {
		nodeKey("nodeSelector", own.NodeSelector != nil, k)
	}
	if a := rs.Affinity; a != nil {
		set := own.Affinity != nil
		for _, k := range nodeAffinityKeys(a.NodeAffinity) {
			nodeKey("affinity", set, k)
		}
		for _, term := range podAffinityTerms(a) {
			nodeKey("affinity", set, term.TopologyKey)
			if term.NamespaceSelector != nil || slices.ContainsFunc(term.Namespaces, func(n string) bool { return n != ws.Namespace }) {
				r.add("affinity", set, "a Pod affinity term may only select Pods of namespace %s", ws.Namespace)
			}
		}
	}
	return r.err(magosv1.ReasonPlacementNotAllowed)
}

// priorityClassAllowed reports whether a runner may use priority class pc.
func (g *PlacementGuards) priorityClassAllowed(pc string) bool {
	if strings.HasPrefix(pc, systemPriorityPrefix) {
		return slices.Contains(g.PriorityClasses, pc)
	}
	return matchesAny(g.PriorityClasses, pc)
}

// nodeAffinityKeys are the node label keys (and node field keys) a node
// affinity selects by.
func nodeAffinityKeys(na *corev1.NodeAffinity) []string {
	if na == nil {
		return nil
	}
	var terms []corev1.NodeSelectorTerm
	if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		terms = append(terms, req.NodeSelectorTerms...)
	}
	for _, p := range na.PreferredDuringSchedulingIgnoredDuringExecution {
		terms = append(terms, p.Preference)
	}
	var keys []string
	for _, t := range terms {
		for _, e := range t.MatchExpressions {
			keys = append(keys, e.Key)
		}
		for _, e := range t.MatchFields {
			keys = append(keys, e.Key)
		}
	}
	return keys
}

// podAffinityTerms are every Pod affinity and anti-affinity term of a.
func podAffinityTerms(a *corev1.Affinity) []corev1.PodAffinityTerm {
	var terms []corev1.PodAffinityTerm
	collect := func(req []corev1.PodAffinityTerm, pref []corev1.WeightedPodAffinityTerm) {
		terms = append(terms, req...)
		for _, w := range pref {
			terms = append(terms, w.PodAffinityTerm)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		collect(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		collect(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	return terms
}

// CheckPodMetadata refuses a run whose effective runner rs puts a label or
// annotation on its Pods whose key the cluster does not allow.
func (g *PlacementGuards) CheckPodMetadata(ws *magosv1.Workspace, rs *magosv1.RunnerSpec) error {
	own := ownRunner(ws)
	r := &refusals{ws: ws}
	for _, k := range slices.Sorted(maps.Keys(rs.PodLabels)) {
		if !matchesAny(g.PodLabelKeys, k) {
			_, set := own.PodLabels[k]
			r.add("podLabels", set, "label key %q (allowed: %s)", k, allowedList(g.PodLabelKeys))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(rs.PodAnnotations)) {
		if !matchesAny(g.PodAnnotationKeys, k) {
			_, set := own.PodAnnotations[k]
			r.add("podAnnotations", set, "annotation key %q (allowed: %s)", k, allowedList(g.PodAnnotationKeys))
		}
	}
	return r.err(magosv1.ReasonPodMetadataNotAllowed)
}
