package setplan

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// parameter matches {{name}} (spaces inside the braces allowed); a name is
// letters, digits, '_', '.' and '-'.
var parameter = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.\-]+)\s*\}\}`)

// Rendered is the template rendered for one element.
type Rendered struct {
	Name                string
	Labels, Annotations map[string]string
	Spec                magosv1.WorkspaceSpec
}

// render replaces every {{param}} in the template's strings (map keys
// included) with e's value. A parameter e lacks is an error naming it, as
// is a rendered name that is not a valid Workspace name.
func render(tpl magosv1.WorkspaceTemplate, e Element) (Rendered, error) {
	raw, err := json.Marshal(tpl)
	if err != nil {
		return Rendered{}, err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Rendered{}, err
	}
	var missing []string
	doc = substitute(doc, e, &missing)
	if len(missing) > 0 {
		slices.Sort(missing)
		return Rendered{}, fmt.Errorf("the template uses %s, which the element (%s) lacks",
			strings.Join(slices.Compact(missing), ", "), describe(e))
	}
	if raw, err = json.Marshal(doc); err != nil {
		return Rendered{}, err
	}
	var out magosv1.WorkspaceTemplate
	if err := json.Unmarshal(raw, &out); err != nil {
		return Rendered{}, fmt.Errorf("the rendered template is not a Workspace: %w", err)
	}
	if errs := validation.IsDNS1123Subdomain(out.Metadata.Name); len(errs) > 0 || len(out.Metadata.Name) > 63 {
		return Rendered{}, fmt.Errorf("the rendered name %s is not a Workspace name (at most 63 lowercase letters, digits, '-' and '.')", clip(out.Metadata.Name))
	}
	if err := checkMetadata(out.Metadata); err != nil {
		return Rendered{Name: out.Metadata.Name}, err
	}
	return Rendered{Name: out.Metadata.Name, Labels: out.Metadata.Labels, Annotations: out.Metadata.Annotations, Spec: out.Spec}, nil
}

// checkMetadata refuses rendered labels and annotations the API would not
// take, or that would set what is not the template's to set: Magos's own
// keys (magos.dev and its subdomains: the set's label, a person's unlock
// or adoption) and Kubernetes' (kubernetes.io, k8s.io). Parameters that
// come from a repository (directory names) flow into them; they are
// refused, never rewritten to fit, since two values rewritten alike
// would collide.
func checkMetadata(m magosv1.WorkspaceTemplateMetadata) error {
	for _, k := range slices.Sorted(maps.Keys(m.Labels)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label key %s is not a label key: %s", clip(k), errs[0])
		}
		if owner := reservedKey(k); owner != "" {
			return fmt.Errorf("label key %s is %s own: a template cannot set it", clip(k), owner)
		}
		if errs := validation.IsValidLabelValue(m.Labels[k]); len(errs) > 0 {
			return fmt.Errorf("label %s: value %s is not a label value (at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit)", k, clip(m.Labels[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.Annotations)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("annotation key %s is not an annotation key: %s", clip(k), errs[0])
		}
		if owner := reservedKey(k); owner != "" {
			return fmt.Errorf("annotation key %s is %s own: a template cannot set it", clip(k), owner)
		}
	}
	return nil
}

// reservedKey names whose a label or annotation key is when a template
// may not set it ("Magos's", "Kubernetes'"), "" when it may.
func reservedKey(key string) string {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return ""
	}
	under := func(domain string) bool { return prefix == domain || strings.HasSuffix(prefix, "."+domain) }
	switch {
	case under("magos.dev"):
		return "Magos's"
	case under("kubernetes.io"), under("k8s.io"):
		return "Kubernetes'"
	}
	return ""
}

// clipLen bounds what a message quotes of a value from an element.
const clipLen = 40

// clip quotes s for a message, cut to clipLen characters: values come
// from repositories (directory names of any length and bytes).
func clip(s string) string {
	if r := []rune(s); len(r) > clipLen {
		s = string(r[:clipLen-1]) + "…"
	}
	return strconv.Quote(s)
}

// substitute replaces the parameters of every string in v, recording the
// ones e lacks in missing.
func substitute(v any, e Element, missing *[]string) any {
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

// describeLen bounds an element's description.
const describeLen = 100

// describe renders an element for messages, its parameters sorted, a
// value quoted where it is not plain text or longer than clipLen, the
// whole at most describeLen characters.
func describe(e Element) string {
	parts := make([]string, 0, len(e))
	for _, k := range slices.Sorted(maps.Keys(e)) {
		v := e[k]
		if len(v) > clipLen || strings.ContainsFunc(v, func(r rune) bool { return !unicode.IsGraphic(r) || r == ',' }) {
			v = clip(v)
		}
		parts = append(parts, k+"="+v)
	}
	out := strings.Join(parts, ", ")
	if r := []rune(out); len(r) > describeLen {
		out = string(r[:describeLen-1]) + "…"
	}
	return out
}
