package planrender

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What a value the JSON does not show is rendered as.
const (
	sensitiveValue = "(sensitive value)"
	unknownValue   = "(known after apply)"
)

// plan is the part of the plan JSON format rendered.
type plan struct {
	FormatVersion   string            `json:"format_version"`
	Errored         bool              `json:"errored"`
	ResourceChanges []resourceChange  `json:"resource_changes"`
	OutputChanges   map[string]change `json:"output_changes"`
	Variables       map[string]struct {
		Value any `json:"value"`
	} `json:"variables"`
}

type resourceChange struct {
	Address         string `json:"address"`
	PreviousAddress string `json:"previous_address"`
	ModuleAddress   string `json:"module_address"`
	Mode            string `json:"mode"`
	Type            string `json:"type"`
	Name            string `json:"name"`
	Index           any    `json:"index"`
	Deposed         string `json:"deposed"`
	Change          change `json:"change"`
	ActionReason    string `json:"action_reason"`
}

type change struct {
	Actions         []string `json:"actions"`
	Before          any      `json:"before"`
	After           any      `json:"after"`
	AfterUnknown    any      `json:"after_unknown"`
	BeforeSensitive any      `json:"before_sensitive"`
	AfterSensitive  any      `json:"after_sensitive"`
	ReplacePaths    [][]any  `json:"replace_paths"`
	Importing       *struct {
		ID string `json:"id"`
	} `json:"importing"`
}

// Options are what a rendering hides besides the values the JSON marks
// sensitive.
type Options struct {
	// SensitiveVariables name root input variables whose values are
	// secret although the configuration may not mark them sensitive (those
	// the runner masks in its output: values read from Secrets, variables
	// marked sensitive in the Workspace or a VariableSet). Their values, as
	// the JSON's variables section gives them, are masked wherever they
	// appear.
	SensitiveVariables []string
	// AllVariablesSensitive masks the value of every root input variable,
	// for a caller that cannot tell which are secret.
	AllVariablesSensitive bool
}

// Render renders the plan of a plan JSON document for people. A document
// that is not a plan JSON (no format_version) is an error.
func Render(planJSON []byte, opts Options) (string, error) {
	var p plan
	dec := json.NewDecoder(bytes.NewReader(planJSON))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return "", fmt.Errorf("reading the plan JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", errors.New("reading the plan JSON: more than one document")
	}
	if p.FormatVersion == "" {
		return "", errors.New("reading the plan JSON: no format_version, not a plan")
	}
	r := &renderer{masks: newMasker(p.Variables, opts)}
	var add, chg, destroy, imports, forgets int
	for _, rc := range p.ResourceChanges {
		act := actionOf(rc.Change.Actions)
		moved := rc.PreviousAddress != "" && rc.PreviousAddress != rc.Address
		if act == noOp && !moved && rc.Change.Importing == nil || act == del && rc.Mode == "data" {
			continue
		}
		for _, a := range rc.Change.Actions {
			switch a {
			case "create":
				add++
			case "update":
				chg++
			case "delete":
				destroy++
			case "forget":
				forgets++
			}
		}
		if rc.Change.Importing != nil {
			imports++
		}
		if r.b.Len() == 0 {
			r.b.WriteString("Resource changes:\n")
		}
		r.line(0, "")
		r.resource(rc, act)
	}
	if r.b.Len() > 0 {
		r.line(0, "")
		r.line(0, "Plan: "+summary(imports, add, chg, destroy, forgets))
	}
	r.outputs(p.OutputChanges)
	switch {
	case p.Errored:
		r.line(0, "")
		r.line(0, "The engine reported errors while planning: the plan is incomplete.")
	case r.b.Len() == 0:
		r.line(0, "No changes. Your infrastructure matches the configuration.")
	}
	return strings.TrimPrefix(r.b.String(), "\n"), nil
}

// summary is the engine's counts line, with imports and forgets only when
// there are some.
func summary(imports, add, chg, destroy, forgets int) string {
	s := fmt.Sprintf("%d to add, %d to change, %d to destroy", add, chg, destroy)
	if imports > 0 {
		s = fmt.Sprintf("%d to import, ", imports) + s
	}
	if forgets > 0 {
		s += fmt.Sprintf(", %d to forget", forgets)
	}
	return s + "."
}

// action is what a resource change does.
type action int

const (
	noOp action = iota
	create
	read
	update
	del
	deleteThenCreate
	createThenDelete
	forget
	unknownAction
)

func actionOf(actions []string) action {
	switch {
	case slices.Equal(actions, []string{"no-op"}):
		return noOp
	case slices.Equal(actions, []string{"create"}):
		return create
	case slices.Equal(actions, []string{"read"}):
		return read
	case slices.Equal(actions, []string{"update"}):
		return update
	case slices.Equal(actions, []string{"delete"}):
		return del
	case slices.Equal(actions, []string{"delete", "create"}):
		return deleteThenCreate
	case slices.Equal(actions, []string{"create", "delete"}):
		return createThenDelete
	case slices.Equal(actions, []string{"forget"}):
		return forget
	}
	return unknownAction
}

// sign is how an action marks a resource block.
func (a action) sign() string {
	switch a {
	case create:
		return "  +"
	case read:
		return " <="
	case update:
		return "  ~"
	case del:
		return "  -"
	case deleteThenCreate:
		return "-/+"
	case createThenDelete:
		return "+/-"
	case forget:
		return "  ."
	}
	return "   "
}

// renderer writes lines.
type renderer struct {
	b     strings.Builder
	masks *masker
}

func (r *renderer) line(indent int, s string) {
	r.b.WriteString(strings.Repeat(" ", indent))
	r.b.WriteString(s)
	r.b.WriteByte('\n')
}

// resource writes one resource change: what happens to it and why, then
// its attributes.
func (r *renderer) resource(rc resourceChange, act action) {
	addr := r.clean(rc.Address)
	if rc.Deposed != "" {
		addr += " (deposed object " + r.clean(rc.Deposed) + ")"
	}
	prev := r.clean(rc.PreviousAddress)
	moved := rc.PreviousAddress != "" && rc.PreviousAddress != rc.Address
	note := func(s string) { r.line(2, "# "+s) }
	switch act {
	case create:
		note(addr + " will be created")
	case read:
		note(addr + " will be read during apply")
		switch rc.ActionReason {
		case "read_because_config_unknown":
			note("(config refers to values not yet known)")
		case "read_because_dependency_pending":
			note("(depends on a resource or a module with changes pending)")
		case "read_because_check_nested":
			note("(config will be reloaded to verify a check block)")
		}
	case update:
		note(addr + " will be updated in-place")
	case deleteThenCreate, createThenDelete:
		switch rc.ActionReason {
		case "replace_because_tainted":
			note(addr + " is tainted, so it must be replaced")
		case "replace_by_request":
			note(addr + " will be replaced, as requested")
		case "replace_by_triggers":
			note(addr + " will be replaced due to changes in replace_triggered_by")
		default:
			note(addr + " must be replaced")
		}
	case del:
		note(addr + " will be destroyed")
		switch rc.ActionReason {
		case "delete_because_no_resource_config":
			note("(because " + r.clean(rc.Type+"."+rc.Name) + " is not in configuration)")
		case "delete_because_no_move_target":
			note("(because " + prev + " was moved to " + addr + ", which is not in configuration)")
		case "delete_because_no_module":
			note("(because " + r.clean(rc.ModuleAddress) + " is not in configuration)")
		case "delete_because_wrong_repetition":
			note("(because the resource's count or for_each changed)")
		case "delete_because_count_index":
			note("(because index [" + r.clean(fmt.Sprint(rc.Index)) + "] is out of range for count)")
		case "delete_because_each_key":
			note("(because key [" + r.quote(fmt.Sprint(rc.Index)) + "] is not in for_each map)")
		}
	case forget:
		note(addr + " will be removed from the state but will not be destroyed")
	case noOp:
		if moved {
			note(prev + " has moved to " + addr)
		} else {
			note(addr + " will be imported")
		}
	default:
		note(addr + " will be changed by actions " + r.quote(strings.Join(rc.Change.Actions, ", ")))
	}
	if moved && act != noOp {
		note("(moved from " + prev + ")")
	}
	if imp := rc.Change.Importing; imp != nil && !(act == noOp && !moved) {
		note("(imported from " + r.quote(imp.ID) + ")")
	}
	keyword := "resource"
	if rc.Mode == "data" {
		keyword = "data"
	}
	r.line(0, fmt.Sprintf("%s %s %s %s {", act.sign(), keyword, r.quote(rc.Type), r.quote(rc.Name)))
	c := rc.Change
	before := value{v: c.Before, sensitive: c.BeforeSensitive}
	after := value{v: c.After, sensitive: c.AfterSensitive, unknown: c.AfterUnknown}
	switch act {
	case create, read:
		before = value{}
	case del, forget:
		after = value{}
	}
	r.object(6, before, after, replaceKeys(c.ReplacePaths))
	r.line(4, "}")
}

// replaceKeys are the top-level attributes whose change forces the
// replacement.
func replaceKeys(paths [][]any) map[string]bool {
	keys := map[string]bool{}
	for _, p := range paths {
		if len(p) > 0 {
			if k, ok := p[0].(string); ok {
				keys[k] = true
			}
		}
	}
	return keys
}

// outputs writes the output changes, sorted by name.
func (r *renderer) outputs(changes map[string]change) {
	names := make([]string, 0, len(changes))
	for name, c := range changes {
		if a := actionOf(c.Actions); a != noOp && a != read {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return
	}
	sort.Strings(names)
	r.line(0, "")
	r.line(0, "Changes to Outputs:")
	width := 0
	for _, n := range names {
		width = max(width, len(r.attrName(n)))
	}
	for _, name := range names {
		c := changes[name]
		before := value{v: c.Before, sensitive: c.BeforeSensitive}
		after := value{v: c.After, sensitive: c.AfterSensitive, unknown: c.AfterUnknown}
		switch actionOf(c.Actions) {
		case create:
			before = value{}
		case del:
			after = value{}
		}
		r.attribute(2, padded(r.attrName(name), width), before, after, false)
	}
}

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
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c == '-' || c >= '0' && c <= '9')) {
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
