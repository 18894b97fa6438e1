package runjob

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// EffectiveRunner is the Workspace's runner over its Project's
// defaults.runner (p may be nil).
func EffectiveRunner(ws *magosv1.Workspace, p *magosv1.Project) magosv1.RunnerSpec {
	var rs magosv1.RunnerSpec
	if p != nil && p.Status.Defaults != nil && p.Status.Defaults.Runner != nil {
		mergeRunner(&rs, p.Status.Defaults.Runner)
	}
	if ws.Spec.Runner != nil {
		mergeRunner(&rs, ws.Spec.Runner)
	}
	return rs
}

// mergeRunner sets on dst every runner setting src sets. Single values and
// objects (image, resources, timeout, nodeSelector, tolerations,
// serviceAccountAnnotations, plan, affinity, priorityClassName, cliConfig)
// replace dst's; env and volumes merge by name, podLabels and
// podAnnotations by key, imagePullSecrets by name (src's entry wins);
// securityContext per ID. The maps and lists it merges are dst's own
// copies, so a merge never writes into a Project read from the cache; the
// values it replaces whole may be src's, and nothing writes into them.
func mergeRunner(dst, src *magosv1.RunnerSpec) {
	if src.Image != "" {
		dst.Image = src.Image
	}
	if src.Resources != nil {
		dst.Resources = src.Resources
	}
	if src.NodeSelector != nil {
		dst.NodeSelector = src.NodeSelector
	}
	if src.Timeout != nil {
		dst.Timeout = src.Timeout
	}
	if src.Tolerations != nil {
		dst.Tolerations = src.Tolerations
	}
	if src.ServiceAccountAnnotations != nil {
		dst.ServiceAccountAnnotations = src.ServiceAccountAnnotations
	}
	if src.Plan != nil {
		dst.Plan = src.Plan
	}
	if src.Affinity != nil {
		dst.Affinity = src.Affinity
	}
	if src.PriorityClassName != "" {
		dst.PriorityClassName = src.PriorityClassName
	}
	if src.CLIConfig != nil {
		dst.CLIConfig = src.CLIConfig
	}
	dst.Env = mergeByName(dst.Env, src.Env, func(e magosv1.EnvEntry) string { return e.Name })
	dst.Volumes = mergeByName(dst.Volumes, src.Volumes, func(v magosv1.RunnerVolume) string { return v.Name })
	dst.ImagePullSecrets = mergeByName(dst.ImagePullSecrets, src.ImagePullSecrets, func(r magosv1.LocalObjectReference) string { return r.Name })
	dst.PodLabels = mergeMaps(dst.PodLabels, src.PodLabels)
	dst.PodAnnotations = mergeMaps(dst.PodAnnotations, src.PodAnnotations)
	if sc := src.SecurityContext; sc != nil {
		out := &magosv1.RunnerSecurityContext{}
		if dst.SecurityContext != nil {
			*out = *dst.SecurityContext
		}
		out.RunAsUser = cmp.Or(sc.RunAsUser, out.RunAsUser)
		out.RunAsGroup = cmp.Or(sc.RunAsGroup, out.RunAsGroup)
		out.FSGroup = cmp.Or(sc.FSGroup, out.FSGroup)
		dst.SecurityContext = out
	}
}

// mergeByName returns dst's entries with src's over them: an entry of the
// same name is replaced in place, a new one appended. nil when both are empty.
func mergeByName[T any](dst, src []T, name func(T) string) []T {
	if len(src) == 0 {
		return dst
	}
	out := slices.Clone(dst)
	for _, e := range src {
		if i := slices.IndexFunc(out, func(o T) bool { return name(o) == name(e) }); i >= 0 {
			out[i] = e
		} else {
			out = append(out, e)
		}
	}
	return out
}

// mergeMaps returns dst's keys with src's over them.
func mergeMaps(dst, src map[string]string) map[string]string {
	if len(src) == 0 {
		return dst
	}
	out := maps.Clone(dst)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, src)
	return out
}

// runnerFieldSet says, for each RunnerField, whether a RunnerSpec sets it.
var runnerFieldSet = map[magosv1.RunnerField]func(*magosv1.RunnerSpec) bool{
	"serviceAccountAnnotations": func(r *magosv1.RunnerSpec) bool { return r.ServiceAccountAnnotations != nil },
	"plan":                      func(r *magosv1.RunnerSpec) bool { return r.Plan != nil },
	"image":                     func(r *magosv1.RunnerSpec) bool { return r.Image != "" },
	"resources":                 func(r *magosv1.RunnerSpec) bool { return r.Resources != nil },
	"nodeSelector":              func(r *magosv1.RunnerSpec) bool { return r.NodeSelector != nil },
	"tolerations":               func(r *magosv1.RunnerSpec) bool { return r.Tolerations != nil },
	"timeout":                   func(r *magosv1.RunnerSpec) bool { return r.Timeout != nil },
	"env":                       func(r *magosv1.RunnerSpec) bool { return r.Env != nil },
	"volumes":                   func(r *magosv1.RunnerSpec) bool { return r.Volumes != nil },
	"cliConfig":                 func(r *magosv1.RunnerSpec) bool { return r.CLIConfig != nil },
	"podLabels":                 func(r *magosv1.RunnerSpec) bool { return r.PodLabels != nil },
	"podAnnotations":            func(r *magosv1.RunnerSpec) bool { return r.PodAnnotations != nil },
	"affinity":                  func(r *magosv1.RunnerSpec) bool { return r.Affinity != nil },
	"priorityClassName":         func(r *magosv1.RunnerSpec) bool { return r.PriorityClassName != "" },
	"imagePullSecrets":          func(r *magosv1.RunnerSpec) bool { return r.ImagePullSecrets != nil },
	"securityContext":           func(r *magosv1.RunnerSpec) bool { return r.SecurityContext != nil },
}

// forbiddenOverrides lists, sorted, the fields rs sets that forbidden
// names ("*" names all of them).
func forbiddenOverrides(rs *magosv1.RunnerSpec, forbidden []magosv1.RunnerField) []string {
	if rs == nil || len(forbidden) == 0 {
		return nil
	}
	all := slices.Contains(forbidden, magosv1.AllRunnerFields)
	var out []string
	for field, set := range runnerFieldSet {
		if (all || slices.Contains(forbidden, field)) && set(rs) {
			out = append(out, string(field))
		}
	}
	slices.Sort(out)
	return out
}

// CheckRunnerOverrides stalls a Workspace that sets a runner field its
// Project forbids members to override, naming every such field.
func CheckRunnerOverrides(ws *magosv1.Workspace, p *magosv1.Project) error {
	fields := forbiddenOverrides(ws.Spec.Runner, p.Status.ForbiddenRunnerOverrides)
	if len(fields) == 0 {
		return nil
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = "spec.runner." + f
	}
	return rerror.Stall(magosv1.ReasonRunnerOverrideForbidden, fmt.Errorf(
		"%s: forbidden by Project %s (spec.forbiddenRunnerOverrides); remove it to use the Project's defaults.runner",
		strings.Join(names, ", "), p.Name))
}

// RunnerEnv renders runner env entries as container env; values from
// Secrets stay valueFrom references and are named in sensitive.
func RunnerEnv(entries []magosv1.EnvEntry) (env []corev1.EnvVar, sensitive []string) {
	for _, e := range entries {
		v := corev1.EnvVar{Name: e.Name}
		switch {
		case e.ValueFrom != nil:
			v.ValueFrom = &corev1.EnvVarSource{SecretKeyRef: e.ValueFrom.SecretKeyRef, ConfigMapKeyRef: e.ValueFrom.ConfigMapKeyRef}
			if e.ValueFrom.SecretKeyRef != nil {
				sensitive = append(sensitive, e.Name)
			}
		case e.Value != nil:
			v.Value = *e.Value
		}
		env = append(env, v)
	}
	return env, sensitive
}

// CheckRunnerConfig refuses an effective runner configuration that admission
// admits piece by piece but that cannot run as a whole: runner env that
// sets a reserved name or a name the variables set too, two volumes at one
// mount path, a mount at, under or over a path of the runner's (the
// versions directory included), Pod labels or annotations Kubernetes refuses.
func CheckRunnerConfig(rs *magosv1.RunnerSpec, env, varEnv []corev1.EnvVar, versionsDir string) error {
	if err := CheckEnv(env, nil, "runner env (spec.runner.env or the Project's defaults.runner.env)"); err != nil {
		return err
	}
	for _, e := range env {
		if slices.ContainsFunc(varEnv, func(v corev1.EnvVar) bool { return v.Name == e.Name }) {
			return rerror.Stall(magosv1.ReasonDuplicateVariable, fmt.Errorf(
				"%s is set by both the runner env and a VariableSet or spec.vars; set it in one place", e.Name))
		}
	}
	reserved := append(slices.Clone(magosv1.ReservedMountPaths), versionsDir)
	seen := map[string]string{}
	for _, v := range rs.Volumes {
		if other, dup := seen[v.MountPath]; dup {
			return rerror.Stall(magosv1.ReasonInvalidRunnerConfig, fmt.Errorf("runner volumes %s and %s are both mounted at %s", other, v.Name, v.MountPath))
		}
		seen[v.MountPath] = v.Name
		if r := magosv1.MountPathConflict(v.MountPath, reserved); r != "" {
			return rerror.Stall(magosv1.ReasonInvalidRunnerConfig, fmt.Errorf("runner volume %s at %s would be at, under or over the runner's %s", v.Name, v.MountPath, r))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(rs.PodLabels)) {
		if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(rs.PodLabels[k])...); len(errs) > 0 {
			return rerror.Stall(magosv1.ReasonInvalidRunnerConfig, fmt.Errorf("runner Pod label %q: %s", k, strings.Join(errs, "; ")))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(rs.PodAnnotations)) {
		if errs := validation.IsQualifiedName(strings.ToLower(k)); len(errs) > 0 {
			return rerror.Stall(magosv1.ReasonInvalidRunnerConfig, fmt.Errorf("runner Pod annotation %q: %s", k, strings.Join(errs, "; ")))
		}
	}
	return nil
}

// CheckEnv refuses environment from user input (a VariableSet's status,
// a Workspace's inline variables) that sets a reserved name, or that holds
// a sensitive value as a literal: admission refuses both, this catches
// objects admitted before the rules existed.
func CheckEnv(env []corev1.EnvVar, sensitive []string, from string) error {
	for _, e := range env {
		if magosv1.IsReservedEnv(e.Name) {
			return rerror.Stall(magosv1.ReasonReservedEnvironment, fmt.Errorf(
				"%s sets %s, which Magos or the engine reserves; the run would not be what Magos set up", from, e.Name))
		}
		if e.ValueFrom == nil && slices.Contains(sensitive, e.Name) {
			return rerror.Stall(magosv1.ReasonSensitiveLiteral, fmt.Errorf(
				"%s gives sensitive %s a literal value; put it in a Secret and use valueFrom.secretKeyRef", from, e.Name))
		}
	}
	return nil
}
