package mask

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// Replacement is what a secret value is replaced with.
const Replacement = "(sensitive value)"

// MinLen is the shortest value that is masked. A shorter value turns up by
// chance in ordinary output ("1", "on", "dev"), so masking it would replace
// it all over the log, and the pattern of replacements would show the value
// anyway; a secret that short (at most 2^24 values) protects nothing. Such
// values are not masked; the runner names the variables that hold one.
const MinLen = 4

// minLineLen is the shortest line of a multi-line secret that is also
// masked on its own (engines re-indent multi-line strings when they print
// them, so the whole value rarely appears verbatim).
const minLineLen = 8

// Masker replaces known secret values. The zero value masks nothing.
type Masker struct {
	// values are the byte strings to hide, longest first so that a value
	// containing another one is replaced whole.
	values [][]byte
	// maxLen is the length of the longest value.
	maxLen int
	// multiline is true when a value contains a newline.
	multiline bool
	// first marks the bytes a value starts with, to skip the rest quickly.
	first [256]bool
}

// New returns a Masker for values. Values shorter than MinLen, or blank,
// are ignored; for each value its JSON-escaped form and, for a multi-line value,
// each of its longer lines are masked too.
func New(values ...string) *Masker {
	set := map[string]bool{}
	for _, v := range values {
		if TooShort(v) {
			continue
		}
		set[v] = true
		if esc := jsonEscaped(v); esc != v {
			set[esc] = true
		}
		if strings.Contains(v, "\n") {
			for _, line := range strings.Split(v, "\n") {
				if line = strings.TrimSpace(line); len(line) >= minLineLen {
					set[line] = true
				}
			}
		}
	}
	m := &Masker{}
	for v := range set {
		m.values = append(m.values, []byte(v))
		m.maxLen = max(m.maxLen, len(v))
		m.first[v[0]] = true
		if strings.Contains(v, "\n") {
			m.multiline = true
		}
	}
	sort.Slice(m.values, func(i, j int) bool {
		if len(m.values[i]) != len(m.values[j]) {
			return len(m.values[i]) > len(m.values[j])
		}
		return bytes.Compare(m.values[i], m.values[j]) < 0
	})
	return m
}

// TooShort says whether v is too short (or blank) to be masked.
func TooShort(v string) bool {
	return len(v) < MinLen || strings.TrimSpace(v) == ""
}

// FromEnv returns a Masker for the values of the environment variables
// listed (comma-separated) in names, looked up with getenv.
func FromEnv(names string, getenv func(string) string) *Masker {
	var values []string
	for _, n := range strings.Split(names, ",") {
		if n = strings.TrimSpace(n); n != "" {
			values = append(values, getenv(n))
		}
	}
	return New(values...)
}

// TooShortIn names the variables listed in names (comma-separated) whose
// values are set but too short to be masked.
func TooShortIn(names string, getenv func(string) string) []string {
	var short []string
	for _, n := range strings.Split(names, ",") {
		if n = strings.TrimSpace(n); n != "" && getenv(n) != "" && TooShort(getenv(n)) {
			short = append(short, n)
		}
	}
	return short
}

// With returns a Masker that also hides values.
func (m *Masker) With(values ...string) *Masker {
	if m == nil {
		return New(values...)
	}
	all := make([]string, 0, len(m.values)+len(values))
	for _, v := range m.values {
		all = append(all, string(v))
	}
	return New(append(all, values...)...)
}

// String returns s with every secret value replaced.
func (m *Masker) String(s string) string {
	if m == nil || len(m.values) == 0 {
		return s
	}
	out, _ := m.mask([]byte(s), len(s))
	return string(out)
}

// mask rewrites buf[:limit] plus any secret that starts before limit and
// ends inside buf. It returns the masked bytes and how many bytes of buf
// they consumed.
func (m *Masker) mask(buf []byte, limit int) ([]byte, int) {
	out := make([]byte, 0, limit+len(Replacement))
	i := 0
scan:
	for i < limit {
		if !m.first[buf[i]] {
			out = append(out, buf[i])
			i++
			continue
		}
		for _, v := range m.values {
			if bytes.HasPrefix(buf[i:], v) {
				out = append(out, Replacement...)
				i += len(v)
				continue scan
			}
		}
		out = append(out, buf[i])
		i++
	}
	return out, i
}

// jsonEscaped is v as it appears inside a JSON or HCL string literal.
func jsonEscaped(v string) string {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return string(b[1 : len(b)-1])
}
