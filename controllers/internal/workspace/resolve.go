package workspace

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/rerror"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// inputs are a Workspace's resolved inputs: its Project (if any) and the
// runner environment folded from VariableSets and inline variables.
type inputs struct {
	Project *magosv1.Project
	// Runner is the effective runner: the Workspace's runner settings over
	// its Project's defaults (runjob.EffectiveRunner), derived once.
	Runner    magosv1.RunnerSpec
	Env       []corev1.EnvVar
	Sensitive []string
	// SetDigests are "<name>=<inputsDigest>" of the VariableSets used.
	SetDigests []string
	// OutputReads are "<workspace>/<output>=<planID>" of the dependency
	// outputs the environment reads (outputReads).
	OutputReads []string
}

// resolveProject reads the Workspace's Project from its status. A missing
// or not yet reconciled Project is a wait; a source or annotation the
// Project does not allow, or a runner field it forbids members to
// override, stalls the Workspace.
func (r *Reconciler) resolveProject(ctx context.Context, ws *magosv1.Workspace) (*magosv1.Project, error) {
	if ws.Spec.ProjectRef == nil {
		return nil, nil
	}
	p := &magosv1.Project{}
	if err := r.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: ws.Spec.ProjectRef.Name}, p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, rerror.Wait(magosv1.ReasonProjectNotReady, fmt.Sprintf("Project %s not found", ws.Spec.ProjectRef.Name), 0)
		}
		return nil, err
	}
	if p.Status.ObservedGeneration != p.Generation || !conditions.IsTrue(p, magosv1.ReadyCondition) {
		return nil, rerror.Wait(magosv1.ReasonProjectNotReady, fmt.Sprintf("Project %s is not Ready yet", p.Name), 0)
	}
	if err := config.CheckProjectSource(ws, p); err != nil {
		return nil, err
	}
	if err := runjob.CheckRunnerOverrides(ws, p); err != nil {
		return nil, err
	}
	if rs := ws.Spec.Runner; rs != nil {
		if err := annotationsAllowed(rs.ServiceAccountAnnotations, p); err != nil {
			return nil, rerror.Stall(magosv1.ReasonAnnotationNotAllowed, err)
		}
		if rs.Plan != nil {
			if err := annotationsAllowed(rs.Plan.ServiceAccountAnnotations, p); err != nil {
				return nil, rerror.Stall(magosv1.ReasonAnnotationNotAllowed, fmt.Errorf("plan: %w", err))
			}
		}
	}
	return p, nil
}

// annotationsAllowed checks runner ServiceAccount annotations against the
// Project: a key listed in allowedServiceAccountAnnotations takes any value;
// a key of allowedServiceAccountAnnotationValues takes only a value one of
// its globs matches (path.Match, strictly: no "matches anything" shortcut);
// any other key is refused. Keys are checked in order,
// so the message is stable.
func annotationsAllowed(annotations map[string]string, p *magosv1.Project) error {
	for _, key := range slices.Sorted(maps.Keys(annotations)) {
		if slices.Contains(p.Status.AllowedServiceAccountAnnotations, key) {
			continue
		}
		i := slices.IndexFunc(p.Status.AllowedServiceAccountAnnotationValues, func(r magosv1.AnnotationRule) bool { return r.Key == key })
		if i < 0 {
			return fmt.Errorf("runner ServiceAccount annotation %q is not allowed by Project %s", key, p.Name)
		}
		value := annotations[key]
		if !slices.ContainsFunc(p.Status.AllowedServiceAccountAnnotationValues[i].Values, func(glob string) bool { ok, err := path.Match(glob, value); return err == nil && ok }) {
			return fmt.Errorf("runner ServiceAccount annotation %q has a value Project %s does not allow (allowed: %s)",
				key, p.Name, strings.Join(p.Status.AllowedServiceAccountAnnotationValues[i].Values, ", "))
		}
	}
	return nil
}

// resolveVariables folds the runner environment: the Project's VariableSets
// (lowest precedence), then the Workspace's, then inline variables. A name
// defined twice at the same level is an error; a later level overrides.
// VariableSets are read from their status only; no Secret is read.
func (r *Reconciler) resolveVariables(ctx context.Context, ws *magosv1.Workspace, p *magosv1.Project) (inputs, error) {
	in := inputs{Project: p}
	var levels [][]magosv1.LocalObjectReference
	if p != nil {
		levels = append(levels, p.Status.VariableSetRefs)
	}
	levels = append(levels, ws.Spec.VariableSetRefs)

	env := map[string]corev1.EnvVar{}
	sensitive := map[string]bool{}
	for i, refs := range levels {
		level := map[string]string{}
		for _, ref := range refs {
			vs := &magosv1.VariableSet{}
			if err := r.Get(ctx, types.NamespacedName{Namespace: ws.Namespace, Name: ref.Name}, vs); err != nil {
				if apierrors.IsNotFound(err) {
					return in, rerror.Wait(magosv1.ReasonVariableSetNotReady, fmt.Sprintf("VariableSet %s not found", ref.Name), 0)
				}
				return in, err
			}
			if vs.Status.ObservedGeneration != vs.Generation || !conditions.IsTrue(vs, magosv1.ReadyCondition) {
				msg := fmt.Sprintf("VariableSet %s is not Ready", vs.Name)
				if c := conditions.Get(vs, magosv1.ReadyCondition); c != nil && c.Message != "" {
					msg += ": " + c.Message
				}
				return in, rerror.Wait(magosv1.ReasonVariableSetNotReady, msg, 0)
			}
			if err := runjob.CheckEnv(vs.Status.Env, vs.Status.SensitiveEnv, "VariableSet "+vs.Name); err != nil {
				return in, err
			}
			for _, e := range vs.Status.Env {
				if other, dup := level[e.Name]; dup {
					where := "the Workspace's"
					if i == 0 && p != nil {
						where = "Project " + p.Name + "'s"
					}
					return in, rerror.Stall(magosv1.ReasonDuplicateVariable, fmt.Errorf("%s is defined by both VariableSet %s and %s among %s variable sets", e.Name, other, vs.Name, where))
				}
				level[e.Name] = vs.Name
				env[e.Name] = e
				delete(sensitive, e.Name)
			}
			for _, name := range vs.Status.SensitiveEnv {
				sensitive[name] = true
			}
			in.SetDigests = append(in.SetDigests, vs.Name+"="+vs.Status.InputsDigest)
		}
	}
	outputSecrets, err := r.outputSecrets(ctx, ws)
	if err != nil {
		return in, err
	}
	inline, inlineSensitive := runjob.VariableEnv(ws.Spec.Vars, outputSecrets)
	if err := runjob.CheckEnv(inline, inlineSensitive, "spec.vars"); err != nil {
		return in, err
	}
	for _, e := range inline {
		env[e.Name] = e
		delete(sensitive, e.Name)
	}
	for _, name := range inlineSensitive {
		sensitive[name] = true
	}
	for _, e := range env {
		in.Env = append(in.Env, e)
	}
	sort.Slice(in.Env, func(i, j int) bool { return in.Env[i].Name < in.Env[j].Name })
	for name := range sensitive {
		in.Sensitive = append(in.Sensitive, name)
	}
	sort.Strings(in.Sensitive)
	return in, nil
}
