package workspaceset

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// parameter matches {{name}} (spaces inside the braces allowed); a name is
// letters, digits, '_', '.' and '-'.
var parameter = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.\-]+)\s*\}\}`)

// rendered is the template rendered for one element.
type rendered struct {
	Name                string
	Labels, Annotations map[string]string
	Spec                magosv1.WorkspaceSpec
}

// render replaces every {{param}} in the template's strings (map keys
// included) with e's value. A parameter e lacks is an error naming it, as
// is a rendered name that is not a valid Workspace name.
func render(tpl magosv1.WorkspaceTemplate, e element) (rendered, error) {
	raw, err := json.Marshal(tpl)
	if err != nil {
		return rendered{}, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return rendered{}, err
	}
	var missing []string
	doc = substitute(doc, e, &missing)
	if len(missing) > 0 {
		slices.Sort(missing)
		return rendered{}, fmt.Errorf("the template uses %s, which the element (%s) lacks",
			strings.Join(slices.Compact(missing), ", "), describe(e))
	}
	if raw, err = json.Marshal(doc); err != nil {
		return rendered{}, err
	}
	var out magosv1.WorkspaceTemplate
	if err := json.Unmarshal(raw, &out); err != nil {
		return rendered{}, fmt.Errorf("the rendered template is not a Workspace: %w", err)
	}
	if errs := validation.IsDNS1123Subdomain(out.Metadata.Name); len(errs) > 0 || len(out.Metadata.Name) > 63 {
		return rendered{}, fmt.Errorf("the rendered name %q is not a Workspace name (at most 63 lowercase letters, digits, '-' and '.')", out.Metadata.Name)
	}
	return rendered{Name: out.Metadata.Name, Labels: out.Metadata.Labels, Annotations: out.Metadata.Annotations, Spec: out.Spec}, nil
}

// substitute replaces the parameters of every string in v, recording the
// ones e lacks in missing.
func substitute(v any, e element, missing *[]string) any {
	switch x := v.(type) {
	case string:
		return parameter.ReplaceAllStringFunc(x, func(m string) string {
			name := parameter.FindStringSubmatch(m)[1]
			val, ok := e[name]
			if !ok {
				*missing = append(*missing, name)
			}
			return val
		})
	case []any:
		for i := range x {
			x[i] = substitute(x[i], e, missing)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[substitute(k, e, missing).(string)] = substitute(val, e, missing)
		}
		return out
	}
	return v
}

// describe renders an element for messages, its parameters sorted.
func describe(e element) string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+e[k])
	}
	return strings.Join(parts, ", ")
}
