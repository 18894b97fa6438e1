package planrender

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
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
	if imp := rc.Change.Importing; imp != nil && (act != noOp || moved) {
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
