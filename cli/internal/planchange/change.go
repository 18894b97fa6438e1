package planchange

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Resource is one resource change as compared.
type Resource struct {
	Actions []string
	// After are the planned values by top-level attribute.
	After map[string]json.RawMessage
	// Rest is every other field of the resource change and of its change
	// (change.after_unknown, change.after_sensitive, action_reason, …),
	// normalised.
	Rest map[string]json.RawMessage
}

// Change is the whole change of a plan as compared.
type Change struct {
	// Resources are the resource changes, no-ops left out, by address
	// (a deposed object's with its key).
	Resources map[string]Resource
	// Outputs are the output changes by name, normalised.
	Outputs map[string]json.RawMessage
	// Rest are the other parts compared: configuration, terraform_version,
	// applyable, complete, errored.
	Rest map[string]json.RawMessage
}

// comparedParts are the parts of the plan JSON besides resource and output
// changes that are compared.
var comparedParts = []string{"configuration", "terraform_version", "applyable", "complete", "errored"}

// unchanged is the fields of a resource change left out: the values before
// it, and its actions and planned values, compared apart.
var unchanged = []string{"before", "actions", "after"}

// Parse reads the change plan JSON makes, without the ignored
// top-level attributes.
func Parse(planJSON []byte, ignore []string) (Change, error) {
	var doc struct {
		ResourceChanges []map[string]json.RawMessage `json:"resource_changes"`
		OutputChanges   map[string]json.RawMessage   `json:"output_changes"`
	}
	if err := json.Unmarshal(planJSON, &doc); err != nil {
		return Change{}, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(planJSON, &all); err != nil {
		return Change{}, err
	}
	c := Change{Resources: map[string]Resource{}, Outputs: map[string]json.RawMessage{}, Rest: map[string]json.RawMessage{}}
	for _, rc := range doc.ResourceChanges {
		var change map[string]json.RawMessage
		if err := json.Unmarshal(orNull(rc["change"]), &change); err != nil {
			return Change{}, fmt.Errorf("resource change %s: %w", rc["address"], err)
		}
		var p Resource
		if err := json.Unmarshal(orNull(change["actions"]), &p.Actions); err != nil {
			return Change{}, fmt.Errorf("resource change %s: actions: %w", rc["address"], err)
		}
		if slices.Equal(p.Actions, []string{"no-op"}) {
			continue
		}
		if err := json.Unmarshal(orNull(change["after"]), &p.After); err != nil {
			// A planned value that is not an object (a deleted resource's
			// null) is compared whole.
			p.After = map[string]json.RawMessage{"": change["after"]}
		}
		for _, attr := range ignore {
			delete(p.After, attr)
		}
		p.Rest = map[string]json.RawMessage{}
		for k, v := range rc {
			if k != "change" {
				p.Rest[k] = v
			}
		}
		for k, v := range change {
			if slices.Contains(unchanged, k) {
				continue
			}
			if k == "after_unknown" || k == "after_sensitive" || k == "before_sensitive" {
				v = withoutAttributes(v, ignore)
			}
			p.Rest["change."+k] = v
		}
		for k, v := range p.Rest {
			n, err := Canonical(v)
			if err != nil {
				return Change{}, fmt.Errorf("resource change %s: %s: %w", rc["address"], k, err)
			}
			p.Rest[k] = n
		}
		c.Resources[resourceKey(rc)] = p
	}
	for name, oc := range doc.OutputChanges {
		n, err := Canonical(oc)
		if err != nil {
			return Change{}, fmt.Errorf("output change %s: %w", name, err)
		}
		c.Outputs[name] = n
	}
	for _, k := range comparedParts {
		if v, ok := all[k]; ok {
			n, err := Canonical(v)
			if err != nil {
				return Change{}, fmt.Errorf("%s: %w", k, err)
			}
			c.Rest[k] = n
		}
	}
	return c, nil
}

// resourceKey is the address of resource change rc, with its deposed key
// if it has one.
func resourceKey(rc map[string]json.RawMessage) string {
	var address, deposed string
	_ = json.Unmarshal(orNull(rc["address"]), &address)
	_ = json.Unmarshal(orNull(rc["deposed"]), &deposed)
	if deposed != "" {
		return address + " (deposed " + deposed + ")"
	}
	return address
}

func orNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}

// withoutAttributes is v, a JSON object keyed by attribute (or anything
// else), without the ignored top-level attributes.
func withoutAttributes(v json.RawMessage, ignore []string) json.RawMessage {
	var m map[string]json.RawMessage
	if len(ignore) == 0 || json.Unmarshal(v, &m) != nil || m == nil {
		return v
	}
	for _, attr := range ignore {
		delete(m, attr)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return v
	}
	return out
}

// canonical is v with object keys sorted and insignificant space left
// out; numbers keep their text.
func Canonical(v json.RawMessage) (json.RawMessage, error) {
	d := json.NewDecoder(bytes.NewReader(orNull(v)))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return nil, err
	}
	return json.Marshal(x)
}

// digest identifies the change: plans with the same digest are the same
// change.
func (c Change) Digest() string {
	h := sha256.New()
	write := func(kind, key string, v json.RawMessage) {
		fmt.Fprintf(h, "%s %q %d\n", kind, key, len(v))
		h.Write(v)
	}
	for _, addr := range slices.Sorted(maps.Keys(c.Resources)) {
		r := c.Resources[addr]
		actions, _ := json.Marshal(r.Actions)
		write("resource", addr, actions)
		for _, k := range slices.Sorted(maps.Keys(r.After)) {
			v, err := Canonical(r.After[k])
			if err != nil {
				v = r.After[k]
			}
			write("after", k, v)
		}
		for _, k := range slices.Sorted(maps.Keys(r.Rest)) {
			write("field", k, r.Rest[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(c.Outputs)) {
		write("output", k, c.Outputs[k])
	}
	for _, k := range slices.Sorted(maps.Keys(c.Rest)) {
		write("part", k, c.Rest[k])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// DifferingFields are the fields of two resource changes' Rest that differ,
// sorted, named as in the plan JSON.
func DifferingFields(a, b map[string]json.RawMessage) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if v, ok := b[k]; !ok || !bytes.Equal(a[k], v) {
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// DifferingParts says which parts besides the resource changes differ:
// "outputs message, secret_digest", "configuration", ….
func DifferingParts(a, b Change) []string {
	var out []string
	if names := DifferingFields(a.Outputs, b.Outputs); len(names) > 0 {
		out = append(out, "outputs "+strings.Join(names, ", "))
	}
	return append(out, DifferingFields(a.Rest, b.Rest)...)
}
