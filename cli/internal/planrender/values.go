package planrender

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// value is a value of the JSON with its sensitive and unknown marks: true
// for the whole value, or an object or array of marks for its parts.
type value struct {
	v         any
	sensitive any
	unknown   any
}

func (x value) isSensitive() bool { return x.sensitive == true }
func (x value) isUnknown() bool   { return x.unknown == true }

// absent is a value that is null and not unknown.
func (x value) absent() bool { return x.v == nil && !x.isUnknown() && !x.isSensitive() }

// key is the attribute k of an object value.
func (x value) key(k string) value {
	return value{v: member(x.v, k), sensitive: member(x.sensitive, k), unknown: member(x.unknown, k)}
}

// index is element i of a list value.
func (x value) index(i int) value {
	return value{v: element(x.v, i), sensitive: element(x.sensitive, i), unknown: element(x.unknown, i)}
}

func member(v any, k string) any {
	if m, ok := v.(map[string]any); ok {
		return m[k]
	}
	return nil
}

func element(v any, i int) any {
	if l, ok := v.([]any); ok && i < len(l) {
		return l[i]
	}
	return nil
}

// same says whether two values are the same, marks included.
func same(a, b value) bool {
	return !a.isUnknown() && !b.isUnknown() && equal(a.v, b.v) && equal(markOf(a.sensitive), markOf(b.sensitive))
}

// markOf is a mark with false and empty parts left out, so that an absent
// mark and a false one compare equal.
func markOf(m any) any {
	switch t := m.(type) {
	case bool:
		if t {
			return true
		}
		return nil
	case map[string]any:
		out := map[string]any{}
		for k, v := range t {
			if mv := markOf(v); mv != nil {
				out[k] = mv
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		var out []any
		marked := false
		for _, v := range t {
			mv := markOf(v)
			marked = marked || mv != nil
			out = append(out, mv)
		}
		if !marked {
			return nil
		}
		return out
	}
	return nil
}

func equal(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// object writes the attributes of an object change at indent, sorted by
// name, counting those that do not change. forces names the attributes
// whose change forces a replacement.
func (r *renderer) object(indent int, before, after value, forces map[string]bool) {
	if before.isSensitive() || after.isSensitive() {
		r.line(indent, "# "+sensitiveValue)
		return
	}
	keys := map[string]bool{}
	for _, v := range []any{before.v, after.v, after.unknown} {
		if m, ok := v.(map[string]any); ok {
			for k := range m {
				keys[k] = true
			}
		}
	}
	names := make([]string, 0, len(keys))
	width := 0
	for k := range keys {
		if b, a := before.key(k), after.key(k); (!b.absent() || !a.absent()) && !same(b, a) {
			names = append(names, k)
			width = max(width, len(r.attrName(k)))
		}
	}
	sort.Strings(names)
	unchanged := 0
	for k := range keys {
		if b, a := before.key(k), after.key(k); !b.absent() && same(b, a) {
			unchanged++
		}
	}
	for _, k := range names {
		r.attribute(indent, padded(r.attrName(k), width), before.key(k), after.key(k), forces[k])
	}
	if unchanged > 0 {
		r.line(indent+2, fmt.Sprintf("# (%d unchanged %s hidden)", unchanged, plural(unchanged, "attribute")))
	}
}

// attribute writes one changed attribute: name = value.
func (r *renderer) attribute(indent int, name string, b, a value, forces bool) {
	suffix := ""
	if forces {
		suffix = " # forces replacement"
	}
	switch {
	case b.absent():
		r.value(indent, "+ ", name+" = ", a, suffix)
	case a.absent():
		r.value(indent, "- ", name+" = ", b, " -> null"+suffix)
	case b.isSensitive() || a.isSensitive():
		r.line(indent, "~ "+name+" = "+sensitiveValue+suffix)
	case a.isUnknown():
		if s, ok := r.scalar(b); ok {
			r.line(indent, "~ "+name+" = "+s+" -> "+unknownValue+suffix)
			return
		}
		r.value(indent, "- ", name+" = ", b, suffix)
		r.line(indent, "+ "+name+" = "+unknownValue+suffix)
	default:
		bm, bObj := b.v.(map[string]any)
		am, aObj := a.v.(map[string]any)
		if bObj && aObj && bm != nil && am != nil {
			r.line(indent, "~ "+name+" = {"+suffix)
			r.object(indent+4, b, a, nil)
			r.line(indent+2, "}")
			return
		}
		bl, bList := b.v.([]any)
		al, aList := a.v.([]any)
		if bList && aList && len(bl) == len(al) {
			r.line(indent, "~ "+name+" = ["+suffix)
			r.list(indent+4, b, a, len(al))
			r.line(indent+2, "]")
			return
		}
		bs, bScalar := r.scalar(b)
		as, aScalar := r.scalar(a)
		if bScalar && aScalar {
			r.line(indent, "~ "+name+" = "+bs+" -> "+as+suffix)
			return
		}
		r.value(indent, "- ", name+" = ", b, suffix)
		r.value(indent, "+ ", name+" = ", a, suffix)
	}
}

// list writes the elements of a list change of n elements on both sides,
// counting those that do not change.
func (r *renderer) list(indent int, before, after value, n int) {
	unchanged := 0
	for i := range n {
		b, a := before.index(i), after.index(i)
		if same(b, a) {
			unchanged++
			continue
		}
		r.attribute(indent, fmt.Sprintf("[%d]", i), b, a, false)
	}
	if unchanged > 0 {
		r.line(indent+2, fmt.Sprintf("# (%d unchanged %s hidden)", unchanged, plural(unchanged, "element")))
	}
}

// value writes a whole value after sign and prefix, nested values one
// part a line, each marked with sign, and suffix after it.
func (r *renderer) value(indent int, sign, prefix string, x value, suffix string) {
	if s, ok := r.scalar(x); ok {
		r.line(indent, sign+prefix+s+suffix)
		return
	}
	switch t := x.v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		width := 0
		for k := range t {
			if !x.key(k).absent() {
				keys = append(keys, k)
				width = max(width, len(r.attrName(k)))
			}
		}
		if m, ok := x.unknown.(map[string]any); ok {
			for k := range m {
				if _, seen := t[k]; !seen && x.key(k).isUnknown() {
					keys = append(keys, k)
					width = max(width, len(r.attrName(k)))
				}
			}
		}
		sort.Strings(keys)
		r.line(indent, sign+prefix+"{"+suffix)
		for _, k := range keys {
			r.value(indent+4, sign, padded(r.attrName(k), width)+" = ", x.key(k), "")
		}
		r.line(indent+2, "}")
	case []any:
		r.line(indent, sign+prefix+"["+suffix)
		for i := range t {
			r.value(indent+4, sign, "", x.index(i), ",")
		}
		r.line(indent+2, "]")
	}
}

// scalar renders a value that fits on one line: a string, number, bool,
// null, an empty object or list, or one that is sensitive or unknown.
func (r *renderer) scalar(x value) (string, bool) {
	switch {
	case x.isSensitive():
		return sensitiveValue, true
	case x.isUnknown():
		return unknownValue, true
	}
	switch t := x.v.(type) {
	case nil:
		return "null", true
	case string:
		return r.quote(t), true
	case json.Number:
		return r.clean(t.String()), true
	case bool:
		if t {
			return "true", true
		}
		return "false", true
	case map[string]any:
		if len(t) == 0 && markOf(x.unknown) == nil {
			return "{}", true
		}
	case []any:
		if len(t) == 0 {
			return "[]", true
		}
	}
	return "", false
}

// attrName is an attribute name as written: bare when it is an
// identifier, else quoted.
func (r *renderer) attrName(k string) string {
	if k == "" || r.masks.mask(k) != k {
		return r.quote(k)
	}
	for i, c := range k {
		if !identifierRune(c, i == 0) {
			return r.quote(k)
		}
	}
	return k
}

func padded(s string, width int) string {
	return s + strings.Repeat(" ", max(width-len(s), 0))
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// quote is s as a double-quoted string, every character that is not
// printable escaped (control characters, terminal escapes, bidirectional
// overrides).
func (r *renderer) quote(s string) string {
	if masked := r.masks.mask(s); masked != s {
		if masked == sensitiveValue {
			return masked
		}
		s = masked
	}
	return strconv.Quote(s)
}

// clean is s with every character that is not printable escaped, for an
// address or a name written bare.
func (r *renderer) clean(s string) string {
	s = r.masks.mask(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case strconv.IsPrint(c):
			b.WriteRune(c)
		case c > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, c)
		default:
			fmt.Fprintf(&b, `\u%04x`, c)
		}
		i += size
	}
	return b.String()
}

// identifierRune says whether c may stand at its place in an unquoted
// object key: a letter or underscore, and after the first also a digit or
// a dash.
func identifierRune(c rune, first bool) bool {
	switch {
	case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return true
	case first:
		return false
	}
	return c == '-' || c >= '0' && c <= '9'
}
