package workspace

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
)

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
