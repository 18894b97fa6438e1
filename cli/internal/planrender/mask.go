package planrender

import (
	"encoding/json"
	"slices"
	"strings"
)

// minMasked is the shortest value masked, as the runner's masking: a
// shorter one turns up by chance all over a plan (mask.MinLen).
const minMasked = 4

// minMaskedLine is the shortest line of a multi-line value masked on its
// own.
const minMaskedLine = 8

// masker replaces the values of secret variables in rendered strings.
type masker struct {
	// values are the strings to hide, longest first.
	values []string
}

// newMasker masks the values of the variables opts names, as the plan's
// variables section gives them. A nil masker masks nothing.
func newMasker(vars map[string]struct {
	Value any `json:"value"`
}, opts Options) *masker {
	set := map[string]bool{}
	for name, v := range vars {
		if opts.AllVariablesSensitive || slices.Contains(opts.SensitiveVariables, name) {
			addValue(set, v.Value)
		}
	}
	if len(set) == 0 {
		return nil
	}
	m := &masker{}
	for v := range set {
		m.values = append(m.values, v)
	}
	slices.SortFunc(m.values, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return m
}

// addValue adds what hides a value: a string, its JSON-escaped form and
// its longer lines; for a number or bool its text; for a list or object
// every part and its JSON encoding.
func addValue(set map[string]bool, v any) {
	add := func(s string) {
		if len(strings.TrimSpace(s)) >= minMasked {
			set[s] = true
		}
	}
	switch t := v.(type) {
	case nil:
	case string:
		add(t)
		if b, err := json.Marshal(t); err == nil {
			add(string(b[1 : len(b)-1]))
		}
		if strings.Contains(t, "\n") {
			for _, line := range strings.Split(t, "\n") {
				if line = strings.TrimSpace(line); len(line) >= minMaskedLine {
					set[line] = true
				}
			}
		}
	case map[string]any:
		for _, e := range t {
			addValue(set, e)
		}
		if b, err := json.Marshal(t); err == nil {
			add(string(b))
		}
	case []any:
		for _, e := range t {
			addValue(set, e)
		}
		if b, err := json.Marshal(t); err == nil {
			add(string(b))
		}
	default:
		if b, err := json.Marshal(t); err == nil {
			add(string(b))
		}
	}
}

// mask replaces every secret value in s with "(sensitive value)".
func (m *masker) mask(s string) string {
	if m == nil {
		return s
	}
	for _, v := range m.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, sensitiveValue)
		}
	}
	return s
}
