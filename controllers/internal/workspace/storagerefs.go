package workspace

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
)

// secretMissingRecheck is how often a Workspace waiting on a missing
// Secret looks again (the controller does not watch Secrets).
const secretMissingRecheck = 15 * time.Second

// serviceAccountNameAnnotation marks a ServiceAccount token Secret: the
// apiserver requires it on every Secret of that type.
const serviceAccountNameAnnotation = "kubernetes.io/service-account.name"

// The kubelet resolves valueFrom with its own identity, not the runner's,
// so the runner's Role does not keep a Workspace from reading another's
// storage through a variable. Admission refuses the storage names
// (tfstate-*, *-plan-NN); checkStorageRefs refuses the rest by what the
// Secret is, before any Job exists.

// secretRefs are the Secrets env reads by valueFrom, each with the first
// entry that reads it, in name order.
func secretRefs(env []corev1.EnvVar) []secretRef {
	byName := map[string]*secretRef{}
	for _, e := range env {
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		optional := ref.Optional != nil && *ref.Optional
		if seen, ok := byName[ref.Name]; ok {
			seen.Optional = seen.Optional && optional
			continue
		}
		byName[ref.Name] = &secretRef{Secret: ref.Name, Entry: e.Name, Optional: optional}
	}
	refs := make([]secretRef, 0, len(byName))
	for _, ref := range byName {
		refs = append(refs, *ref)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Secret < refs[j].Secret })
	return refs
}

// secretRef is a Secret an environment entry reads.
type secretRef struct {
	Secret, Entry string
	// Optional is true when every reference to it is optional: the
	// kubelet starts the run without it.
	Optional bool
}

// checkedRefs is what checkStorageRefs found of the Secrets a run reads.
type checkedRefs struct {
	// Deps are the dependencies whose outputs Secret is read, by the
	// Secret's name.
	Deps map[string]*magosv1.Workspace
	// Absent are the Secrets that do not exist and that only optional
	// references read: the run is started without those references
	// (withoutAbsent), so the kubelet never reads a Secret of that name
	// created after the check.
	Absent map[string]bool
}

// checkStorageRefs refuses (Stalled, StorageReferenceNotAllowed) user input
// (env entries, runner volumes and CLI configuration) that reads a Secret
// Magos keeps for a Workspace, this one included, unless it is the outputs
// Secret of a Workspace in spec.dependsOn; it returns those dependencies by
// outputs Secret name. It reads only the Secrets' metadata, uncached. A
// ServiceAccount token Secret is refused (Stalled); a missing Secret makes
// the Workspace wait (SecretMissing) unless it is a dependency's outputs
// Secret or its references are optional, so a Secret created later (another
// Workspace's storage among them) is checked before a run reads it: a
// missing Secret read only by optional references is returned as absent,
// and the run goes without those references.
func (r *Reconciler) checkStorageRefs(ctx context.Context, ws *magosv1.Workspace, refs []secretRef) (checkedRefs, error) {
	deps := map[string]*magosv1.Workspace{}
	absent := map[string]bool{}
	for _, ref := range refs {
		if ownStorage(ws, ref.Secret) {
			return checkedRefs{}, rerror.Stall(magosv1.ReasonStorageReferenceNotAllowed, fmt.Errorf(
				"%s reads Secret %s, which Magos keeps for this Workspace's runs; a Workspace may read only the outputs Secret of a Workspace in spec.dependsOn",
				ref.Entry, ref.Secret))
		}
		meta := &metav1.PartialObjectMetadata{}
		meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: ref.Secret}, meta)
		if apierrors.IsNotFound(err) {
			if ref.Optional {
				absent[ref.Secret] = true // the run goes without it: nothing checked it
				continue
			}
			if r.dependencyOutputs(ctx, ws, ref.Secret) {
				continue // a dependency's wait covers its outputs
			}
			return checkedRefs{}, rerror.Wait(magosv1.ReasonSecretMissing, fmt.Sprintf(
				"%s reads Secret %s, which does not exist; the run waits until it does", ref.Entry, ref.Secret), secretMissingRecheck)
		}
		if err != nil {
			return checkedRefs{}, fmt.Errorf("reading the metadata of Secret %s: %w", ref.Secret, err)
		}
		if sa, ok := meta.Annotations[serviceAccountNameAnnotation]; ok {
			return checkedRefs{}, rerror.Stall(magosv1.ReasonServiceAccountTokenNotAllowed, fmt.Errorf(
				"%s reads Secret %s, a token of ServiceAccount %s; a run has its own identity and reads no other's token", ref.Entry, ref.Secret, sa))
		}
		owner, ok := storageOwner(meta)
		if !ok {
			continue
		}
		dep, err := r.dependencyNamed(ctx, ws, owner)
		if err != nil {
			return checkedRefs{}, err
		}
		if why := outputsReadRefused(meta, owner, dep); why != "" {
			return checkedRefs{}, rerror.Stall(magosv1.ReasonStorageReferenceNotAllowed, fmt.Errorf(
				"%s reads Secret %s, which Magos keeps for Workspace %s and %s; a Workspace may read only the outputs Secret of a Workspace in spec.dependsOn",
				ref.Entry, ref.Secret, owner, why))
		}
		if err := outputConsentRefused(ws, dep); err != nil {
			return checkedRefs{}, err
		}
		deps[ref.Secret] = dep
	}
	return checkedRefs{Deps: deps, Absent: absent}, nil
}

// withoutAbsent is env without the optional references to the absent
// Secrets: the kubelet would read a Secret of that name created between
// the check and the container's start, which no check has seen.
func withoutAbsent(env []corev1.EnvVar, absent map[string]bool) []corev1.EnvVar {
	if len(absent) == 0 {
		return env
	}
	return slices.DeleteFunc(slices.Clone(env), func(e corev1.EnvVar) bool {
		return e.ValueFrom != nil && absentOptional(e.ValueFrom.SecretKeyRef, absent)
	})
}

// runnerEnvWithout is withoutAbsent for the runner's env entries.
func runnerEnvWithout(entries []magosv1.EnvEntry, absent map[string]bool) []magosv1.EnvEntry {
	if len(absent) == 0 {
		return entries
	}
	return slices.DeleteFunc(slices.Clone(entries), func(e magosv1.EnvEntry) bool {
		return e.ValueFrom != nil && absentOptional(e.ValueFrom.SecretKeyRef, absent)
	})
}

// absentOptional says whether ref is an optional reference to an absent
// Secret.
func absentOptional(ref *corev1.SecretKeySelector, absent map[string]bool) bool {
	return ref != nil && ptr.Deref(ref.Optional, false) && absent[ref.Name]
}

// ownStorage says whether name is a Secret Magos keeps for ws's runs,
// whether or not it exists yet (the first run creates them).
func ownStorage(ws *magosv1.Workspace, name string) bool {
	if o := ws.Spec.Outputs; o != nil && o.SecretName == name {
		return true
	}
	if name == magosv1.StateSecretName(ws.Name) || name == magosv1.ErroredStateSecretName(ws.Name) {
		return true
	}
	n, ok := strings.CutPrefix(name, magosv1.PlanStoragePrefix(ws.Name)+"-")
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}

// storageOwner says whether the Secret is storage Magos or the engine's
// kubernetes backend keeps for a Workspace, and for which one ("" when the
// labels do not say).
func storageOwner(s *metav1.PartialObjectMetadata) (string, bool) {
	l := s.Labels
	switch {
	case l[magosv1.ManagedByLabel] == magosv1.ManagedByValue:
		return l[magosv1.WorkspaceLabel], true
	case l["tfstate"] == "true":
		return l["tfstateSecretSuffix"], true
	}
	return "", false
}

// outputsReadRefused says why reading storage Secret s of Workspace owner
// is refused, or "": it must be the outputs Secret of dep, a dependency
// (nil when owner is not one), and be controlled by it.
func outputsReadRefused(s *metav1.PartialObjectMetadata, owner string, dep *magosv1.Workspace) string {
	switch {
	case dep == nil:
		return "that Workspace is not in spec.dependsOn"
	case dep.Spec.Outputs == nil || dep.Spec.Outputs.SecretName != s.Name:
		return "it is not that Workspace's outputs Secret"
	}
	if ref := metav1.GetControllerOf(s); ref == nil || ref.UID != dep.UID || ref.Kind != magosv1.WorkspaceKind {
		return "it is not controlled by that Workspace"
	}
	return ""
}

// dependsOn says whether spec.dependsOn of ws names Workspace name (ws
// itself never counts).
func dependsOn(ws *magosv1.Workspace, name string) bool {
	return name != ws.Name && slices.ContainsFunc(ws.Spec.DependsOn, func(d magosv1.LocalObjectReference) bool { return d.Name == name })
}

// dependencyOutputs says whether Secret name is the outputs Secret of a
// Workspace in spec.dependsOn (which the run waits for anyway).
func (r *Reconciler) dependencyOutputs(ctx context.Context, ws *magosv1.Workspace, name string) bool {
	for _, d := range ws.Spec.DependsOn {
		dep, err := r.dependencyNamed(ctx, ws, d.Name)
		if err == nil && dep != nil && dep.Spec.Outputs != nil && dep.Spec.Outputs.SecretName == name {
			return true
		}
	}
	return false
}

// dependencyNamed reads Workspace name from the cache when ws depends on
// it; nil when it does not, or when it does not exist.
func (r *Reconciler) dependencyNamed(ctx context.Context, ws *magosv1.Workspace, name string) (*magosv1.Workspace, error) {
	if !dependsOn(ws, name) {
		return nil, nil
	}
	dep := &magosv1.Workspace{}
	err := r.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: name}, dep)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Workspace %s: %w", name, err)
	}
	return dep, nil
}

// runnerSecretRefs are the Secrets the runner's volumes and CLI
// configuration mount, each with the setting that mounts it.
func runnerSecretRefs(rs *magosv1.RunnerSpec) []secretRef {
	var refs []secretRef
	for _, v := range rs.Volumes {
		if v.Secret != nil {
			refs = append(refs, secretRef{Secret: v.Secret.SecretName, Entry: "runner volume " + v.Name})
		}
	}
	if rs.CLIConfig != nil {
		refs = append(refs, secretRef{Secret: rs.CLIConfig.SecretName, Entry: "runner cliConfig"})
	}
	return refs
}

// Outputs as inputs. A dependent reads a dependency's output through the
// dependency's outputs Secret: an outputRef is rendered as a secretKeyRef
// on it, and a secretKeyRef on it (inline or from a VariableSet) is allowed
// by checkStorageRefs. The kubelet reads the value; no Magos object holds
// it. The runner reports which outputs an apply changed (it compares the
// Secret's bytes before writing, and writes nothing when none changed);
// the dependency records per output the plan that last changed it
// (status.outputVersions); the dependent folds "<workspace>/<output>=<planID>"
// of every output it reads into its inputs digest. So it re-plans when,
// and only when, an output it reads changes value, and no status holds a
// digest of a value (outputs may be sensitive, and short values could be
// guessed from a digest).

// outputSecrets resolves the outputRefs of ws's inline variables to their
// Workspaces' outputs Secrets (by Workspace name). A Workspace that is not
// a dependency stalls; one that does not exist, writes no outputs or has
// not written the output yet is waited for.
func (r *Reconciler) outputSecrets(ctx context.Context, ws *magosv1.Workspace) (map[string]string, error) {
	secrets := map[string]string{}
	for _, v := range ws.Spec.Vars {
		if v.ValueFrom == nil || v.ValueFrom.OutputRef == nil {
			continue
		}
		ref := v.ValueFrom.OutputRef
		if !dependsOn(ws, ref.Workspace) {
			return nil, rerror.Stall(magosv1.ReasonOutputRefNotDependency, fmt.Errorf(
				"variable %s reads output %s of Workspace %s, which is not in spec.dependsOn; add it there", v.Name, ref.Output, ref.Workspace))
		}
		dep, err := r.dependencyNamed(ctx, ws, ref.Workspace)
		if err != nil {
			return nil, err
		}
		if err := outputConsentRefused(ws, dep); err != nil {
			return nil, err
		}
		if why := outputUnavailable(dep, ref, r.Shard); why != "" {
			return nil, rerror.Wait(magosv1.ReasonOutputNotAvailable, fmt.Sprintf("Variable %s waits for output %s of Workspace %s: %s", v.Name, ref.Output, ref.Workspace, why), 0)
		}
		secrets[ref.Workspace] = dep.Spec.Outputs.SecretName
	}
	return secrets, nil
}

// outputConsentRefused refuses (Stalled) ws reading the outputs of dep when
// dep's spec.outputs.readers does not name it; nil when dep is nil (not
// there yet: its wait says so) or consents.
func outputConsentRefused(ws, dep *magosv1.Workspace) error {
	if dep == nil || dep.Spec.Outputs == nil || dep.Spec.Outputs.Admits(ws.Name) {
		return nil
	}
	return rerror.Stall(magosv1.ReasonOutputReadNotAllowed, fmt.Errorf(
		"dependency %s does not let this Workspace read its outputs: add %s (or \"*\") to its spec.outputs.readers", dep.Name, ws.Name))
}

// outputUnavailable says why dep (nil: not in the cache of shard, nil when
// unsharded) cannot give output ref yet, or "".
func outputUnavailable(dep *magosv1.Workspace, ref *magosv1.OutputReference, shard labels.Selector) string {
	switch {
	case dep == nil:
		return "it " + workspaceMissing(shard)
	case dep.Spec.Outputs == nil:
		return "it writes no outputs (spec.outputs is unset)"
	case !slices.Contains(dep.Status.Outputs, ref.Output):
		if len(dep.Status.Outputs) == 0 {
			return "it has written no outputs yet"
		}
		return "it has not written that output (it has " + strings.Join(dep.Status.Outputs, ", ") + ")"
	}
	return ""
}

// outputReads are "<workspace>/<output>=<planID>" of every output env
// reads from a dependency's outputs Secret (deps by Secret name), sorted:
// what the inputs digest folds in.
func outputReads(env []corev1.EnvVar, deps map[string]*magosv1.Workspace) []string {
	var reads []string
	for _, e := range env {
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		dep, ok := deps[ref.Name]
		if !ok {
			continue
		}
		read := dep.Name + "/" + ref.Key + "=" + decide.OutputVersion(dep.Status.OutputVersions, ref.Key)
		if !slices.Contains(reads, read) {
			reads = append(reads, read)
		}
	}
	sort.Strings(reads)
	return reads
}
