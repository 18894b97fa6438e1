package config

import (
	"flag"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// Guards are cluster-level rules the operator sets once with flags. They
// hold for every Workspace whatever its spec or Project says: omitting a
// field never widens what a Workspace may do.
type Guards struct {
	// RequireProject makes spec.projectRef mandatory in every namespace.
	RequireProject bool
	// RequireProjectIn makes spec.projectRef mandatory in the namespaces
	// whose labels it matches; nil matches none.
	RequireProjectIn labels.Selector
	// NoCrossNamespaceRefs refuses a sourceRef into another namespace, even
	// one a Project's allow-list names.
	NoCrossNamespaceRefs bool
	// AllowedRunnerImages are the entries the effective runner image must
	// match (imageMatches): a repository pattern (path.Match) with a tag
	// pattern or an exact digest; empty allows any image.
	AllowedRunnerImages []string
	// ClusterPolicySelector selects ValidatingPolicies every plan is
	// checked against, in addition to the Workspace's and Project's.
	ClusterPolicySelector *metav1.LabelSelector
	// AllowDestroySkipGate lets a Workspace (or its Project) whose
	// spec.destroy.gate is Skip destroy on deletion without a plan, policy
	// gate or approval. Without it such a Workspace's destroy goes through
	// the gate like any other: the cluster's policies hold for deletes too.
	AllowDestroySkipGate bool
	// NamespacedPoliciesIn lets the NamespacedValidatingPolicies of the
	// namespaces whose labels it matches gate their Workspaces' plans; nil
	// or empty matches none. Elsewhere they are ignored, with an event
	// saying so: a namespace's own policies run tenant-written CEL in the
	// controller's policy engine, which only the cluster admin may allow.
	NamespacedPoliciesIn labels.Selector
	// ForbidCLIConfig refuses runs whose runner has a spec.runner.cliConfig
	// (Workspace or Project default): a Workspace's CLI configuration
	// replaces the operator's (--runner-env TF_CLI_CONFIG_FILE), so its
	// provider_installation could bypass a mandated provider mirror with
	// direct {} or dev_overrides.
	ForbidCLIConfig bool
	// AlwaysSeparatePlanIdentity plans and applies every run in separate
	// Jobs, the plan with the plan identity and the apply with the
	// apply-time proof, even where no decision rests on the plan (no fast
	// path, decide/fastpath_rule.go).
	AlwaysSeparatePlanIdentity bool
	// Placement and Pod metadata of runner Pods (placement.go):
	// patterns (path.Match) of what a Workspace's or Project's runner may
	// ask for; empty allows none of it.
	Placement PlacementGuards
}

// BindFlags registers the guards' flags on fs.
func (g *Guards) BindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&g.RequireProject, "require-project", false, "Refuse every Workspace without spec.projectRef.")
	fs.Func("require-project-namespace-selector", "Refuse Workspaces without spec.projectRef in namespaces whose labels match this label selector (e.g. 'magos.dev/tenant').",
		namespaceSelectorFlag(&g.RequireProjectIn))
	fs.BoolVar(&g.NoCrossNamespaceRefs, "no-cross-namespace-refs", true, "Refuse Workspaces whose sourceRef names another namespace (as Flux's flag of that name; set =false to allow them).")
	fs.Func("allowed-runner-images", "Comma-separated entries the runner image must match: a repository glob (path.Match) with a tag pattern or an exact digest, "+
		"e.g. 'ghcr.io/magos-dev/magos-runner:0.1.0' or 'registry.example/runner@sha256:<64 hex>'; an image with a digest matches only an entry naming that digest "+
		"(repeatable; empty allows any image).",
		appendPatterns(&g.AllowedRunnerImages))
	fs.Func("cluster-policy-selector", "Label selector of ValidatingPolicies every Workspace's plans must pass, whatever its own and its Project's policy selectors say.",
		func(v string) error {
			sel, err := metav1.ParseToLabelSelector(v)
			if err != nil {
				return err
			}
			g.ClusterPolicySelector = sel
			return nil
		})
	fs.BoolVar(&g.AllowDestroySkipGate, "allow-destroy-skip-gate", false, "Honour spec.destroy.gate: Skip (Workspace or Project default): destroy deleted Workspaces without a destroy plan, policy gate or approval. "+
		"Without it every destroy is planned, checked and approved.")
	fs.Func("namespaced-policies-namespace-selector", "Let the NamespacedValidatingPolicies of namespaces whose labels match this label selector "+
		"gate their Workspaces' plans (e.g. 'magos.dev/namespaced-policies=true'); elsewhere they are ignored, with an event saying so. Empty allows none.",
		namespaceSelectorFlag(&g.NamespacedPoliciesIn))
	fs.BoolVar(&g.ForbidCLIConfig, "forbid-runner-cli-config", false, "Refuse runs whose runner has a CLI configuration (spec.runner.cliConfig of the Workspace or its Project), "+
		"which would replace the operator's (e.g. a mandated provider mirror set with --runner-env TF_CLI_CONFIG_FILE).")
	fs.BoolVar(&g.AlwaysSeparatePlanIdentity, "always-separate-plan-identity", false, "Plan and apply every run in separate Jobs (the plan with the plan identity, the apply with the apply-time proof), "+
		"also where nothing decides on the plan (approval Auto, no policy, no Rollout gate), which otherwise plans and applies in one Job with the apply identity.")
	g.Placement.BindFlags(fs)
}

// namespaceSelectorFlag is a flag function that parses a label selector of
// namespaces into dst.
func namespaceSelectorFlag(dst *labels.Selector) func(string) error {
	return func(v string) error {
		sel, err := labels.Parse(v)
		if err != nil {
			return err
		}
		*dst = sel
		return nil
	}
}

// appendPatterns is a flag function that appends the comma-separated
// patterns of each use of the flag to dst.
func appendPatterns(dst *[]string) func(string) error {
	return func(v string) error {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				*dst = append(*dst, p)
			}
		}
		return nil
	}
}

// SkipsDestroyGate decides how a deleted Workspace whose effective destroy
// gate is gate destroys: skip says it runs destroy directly; refused says
// it asked to skip the gate and the cluster does not allow it, so the
// destroy goes through the gate.
func (g *Guards) SkipsDestroyGate(gate magosv1.DestroyGate) (skip, refused bool) {
	if gate != magosv1.DestroyGateSkip {
		return false, false
	}
	return g.AllowDestroySkipGate, !g.AllowDestroySkipGate
}

// Validate checks the guards against the controller's default runner image,
// so that a misconfiguration stops the controller at start, not every
// Workspace later.
func (g *Guards) Validate(defaultImage string) error {
	for _, p := range g.AllowedRunnerImages {
		if err := validImagePattern(p); err != nil {
			return fmt.Errorf("--allowed-runner-images: %w", err)
		}
	}
	if err := g.Placement.Validate(); err != nil {
		return err
	}
	if len(g.AllowedRunnerImages) > 0 && !g.imageAllowed(defaultImage) {
		return fmt.Errorf("--runner-image %q matches no pattern of --allowed-runner-images %v", defaultImage, g.AllowedRunnerImages)
	}
	if g.ClusterPolicySelector != nil {
		if _, err := metav1.LabelSelectorAsSelector(g.ClusterPolicySelector); err != nil {
			return fmt.Errorf("--cluster-policy-selector: %w", err)
		}
	}
	return nil
}

// imageAllowed reports whether an entry of the allow-list admits image
// (imageMatches).
func (g *Guards) imageAllowed(image string) bool {
	if len(g.AllowedRunnerImages) == 0 {
		return true
	}
	for _, p := range g.AllowedRunnerImages {
		if imageMatches(p, image) {
			return true
		}
	}
	return false
}

// CheckRunner applies the guards on the effective runner rs's spec: its
// CLI configuration, placement and Pod metadata.
func (g *Guards) CheckRunner(ws *magosv1.Workspace, rs *magosv1.RunnerSpec) error {
	if err := g.checkCLIConfig(*rs); err != nil {
		return err
	}
	if err := g.Placement.CheckPlacement(ws, rs); err != nil {
		return err
	}
	return g.Placement.CheckPodMetadata(ws, rs)
}

// checkCLIConfig refuses a run whose runner has a CLI configuration where
// the cluster forbids them.
func (g *Guards) checkCLIConfig(runner magosv1.RunnerSpec) error {
	if g.ForbidCLIConfig && runner.CLIConfig != nil {
		return rerror.Stall(magosv1.ReasonCLIConfigNotAllowed, fmt.Errorf(
			"the runner's CLI configuration (Secret %s) is not allowed on this cluster: the operator's CLI configuration applies to every run", runner.CLIConfig.SecretName))
	}
	return nil
}

// CheckRunnerImage refuses a run whose effective runner image (the
// Workspace's, its Project's default or the controller's) the allow-list
// does not match.
func (g *Guards) CheckRunnerImage(image string) error {
	if !g.imageAllowed(image) {
		return rerror.Stall(magosv1.ReasonRunnerImageNotAllowed, fmt.Errorf("runner image %q matches no pattern of the cluster's runner image allow-list", image))
	}
	return nil
}
