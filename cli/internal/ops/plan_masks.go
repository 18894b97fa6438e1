package ops

import (
	"context"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/planrender"
)

// variablePrefix is the prefix of a Terraform variable's environment entry.
const variablePrefix = "TF_VAR_"

// SecretVariables says which input variables of Workspace ws the
// rendering of its plan masks: those whose values the runner masks in its
// output (read from a Secret or an outputRef, or marked sensitive), in
// ws.spec.vars, its runner env, its VariableSets and its Project's, as
// their status says. The plan JSON holds their values in clear when the
// configuration does not mark the variable sensitive. A VariableSet or
// Project that cannot be read leaves no way to tell: then every
// variable's value is masked.
func SecretVariables(ctx context.Context, c client.Reader, ws *magosv1.Workspace) planrender.Options {
	var opts planrender.Options
	for _, v := range ws.Spec.Vars {
		if v.Sensitive || v.ValueFrom != nil && (v.ValueFrom.SecretKeyRef != nil || v.ValueFrom.OutputRef != nil) {
			opts.SensitiveVariables = append(opts.SensitiveVariables, v.Name)
		}
	}
	if r := ws.Spec.Runner; r != nil {
		for _, e := range r.Env {
			if name, ok := strings.CutPrefix(e.Name, variablePrefix); ok && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				opts.SensitiveVariables = append(opts.SensitiveVariables, name)
			}
		}
	}
	refs := ws.Spec.VariableSetRefs
	if ws.Spec.ProjectRef != nil {
		p := &magosv1.Project{}
		if err := c.Get(ctx, clientKey(ws.Namespace, ws.Spec.ProjectRef.Name), p); err != nil {
			return planrender.Options{AllVariablesSensitive: true}
		}
		refs = append(append([]magosv1.LocalObjectReference{}, p.Status.VariableSetRefs...), refs...)
	}
	for _, ref := range refs {
		vs := &magosv1.VariableSet{}
		if err := c.Get(ctx, clientKey(ws.Namespace, ref.Name), vs); err != nil {
			return planrender.Options{AllVariablesSensitive: true}
		}
		for _, env := range vs.Status.SensitiveEnv {
			if name, ok := strings.CutPrefix(env, variablePrefix); ok {
				opts.SensitiveVariables = append(opts.SensitiveVariables, name)
			}
		}
	}
	return opts
}
