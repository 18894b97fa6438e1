package policy

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// decodePolicies parses one or more YAML documents into policies.
func decodePolicies(tb testing.TB, doc []byte) []Policy {
	tb.Helper()
	var out []Policy
	for _, part := range bytes.Split(doc, []byte("\n---")) {
		if len(bytes.TrimSpace(part)) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(part, &u.Object); err != nil {
			tb.Fatalf("parsing policy YAML: %v\n%s", err, part)
		}
		if len(u.Object) == 0 {
			continue
		}
		p, err := FromUnstructured(u)
		if err != nil {
			tb.Fatalf("decoding policy: %v", err)
		}
		out = append(out, p)
	}
	return out
}

// jsonPolicy builds a cluster-scoped JSON-mode ValidatingPolicy named name
// from the YAML lines of its spec that follow `evaluation:` (indented by
// two spaces, like the rest of spec).
func jsonPolicy(tb testing.TB, name, spec string) Policy {
	tb.Helper()
	doc := "apiVersion: policies.kyverno.io/v1\nkind: ValidatingPolicy\nmetadata:\n  name: " + name +
		"\nspec:\n  evaluation:\n    mode: JSON\n" + indent(strings.TrimLeft(spec, "\n"), "  ")
	ps := decodePolicies(tb, []byte(doc))
	if len(ps) != 1 {
		tb.Fatalf("expected one policy, got %d", len(ps))
	}
	return ps[0]
}

// yamlUnmarshal decodes YAML into v through JSON, as Kubernetes does.
func yamlUnmarshal(data []byte, v any) error { return yaml.Unmarshal(data, v) }

// indent prefixes every non-empty line of s.
func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
