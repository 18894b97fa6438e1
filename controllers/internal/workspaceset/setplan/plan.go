package setplan

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// createBurst bounds the Workspaces one reconcile creates; the rest wait
// for the next burst (the reconciler spaces bursts apart), so a large set
// enters the apiserver and the run queue at a bounded rate.
const createBurst = 25

// Changes are what a reconcile does to the set's Workspaces.
type Changes struct {
	// Create are the elements' Workspaces that do not exist yet, at most
	// createBurst; Deferred counts those left for the next reconcile.
	Create   []Rendered
	Deferred int
	// Revert are owned Workspaces whose fields set by the template were
	// edited: they are applied again.
	Revert []Rendered
	// Remove are owned Workspaces no element renders.
	Remove []string
	// Conflicts are rendered names a Workspace the set does not own has.
	Conflicts []string
}

// Plan compares the rendered Workspaces with the live ones: owned
// are those the set owns by name, others the names of Workspaces it does
// not own. With holdRemovals (an element is refused: which Workspace it
// would keep is not known) it removes nothing. It is pure.
func Plan(desired []Rendered, owned map[string]*magosv1.Workspace, others map[string]bool, holdRemovals bool) Changes {
	var c Changes
	want := map[string]bool{}
	for _, d := range desired {
		want[d.Name] = true
		live, ok := owned[d.Name]
		switch {
		case others[d.Name]:
			c.Conflicts = append(c.Conflicts, d.Name)
		case !ok && len(c.Create) < createBurst:
			c.Create = append(c.Create, d)
		case !ok:
			c.Deferred++
		case !upToDate(d, live):
			c.Revert = append(c.Revert, d)
		}
	}
	for name := range owned {
		if !want[name] && !holdRemovals {
			c.Remove = append(c.Remove, name)
		}
	}
	slices.Sort(c.Remove)
	slices.Sort(c.Conflicts)
	return c
}

// Refusal is an element the set does not apply, and why.
type Refusal struct {
	// Element describes the element (describe).
	Element string
	// Name is the Workspace name it renders, "" when it renders none.
	Name   string
	Reason string
}

// RenderAll renders tpl for every element: those that render, and those
// refused (a parameter missing, an identity the API would not take, a
// name another element renders too, each of them refused). A refused
// element stalls itself, not the others. It is pure.
func RenderAll(tpl magosv1.WorkspaceTemplate, els []Element) ([]Rendered, []Refusal) {
	var ok []Rendered
	var refused []Refusal
	var from []Element
	for _, e := range els {
		d, err := render(tpl, e)
		if err != nil {
			refused = append(refused, Refusal{Element: describe(e), Name: d.Name, Reason: err.Error()})
			continue
		}
		ok = append(ok, d)
		from = append(from, e)
	}
	dup := duplicateNames(ok)
	if len(dup) == 0 {
		return ok, refused
	}
	kept := ok[:0:0]
	for i, d := range ok {
		if slices.Contains(dup, d.Name) {
			refused = append(refused, Refusal{Element: describe(from[i]), Name: d.Name, Reason: fmt.Sprintf(
				"more than one element renders the Workspace name %s: use a parameter that tells them apart in metadata.name", d.Name)})
			continue
		}
		kept = append(kept, d)
	}
	return kept, refused
}

// duplicateNames are the names more than one element renders.
func duplicateNames(desired []Rendered) []string {
	seen := map[string]int{}
	var dup []string
	for _, d := range desired {
		if seen[d.Name]++; seen[d.Name] == 2 {
			dup = append(dup, d.Name)
		}
	}
	slices.Sort(dup)
	return dup
}

// upToDate says whether live carries every label, annotation and spec
// field the rendered template sets, with the same value; fields the
// template leaves unset (an approval, a plan request) are not compared.
func upToDate(d Rendered, live *magosv1.Workspace) bool {
	for k, v := range d.Labels {
		if live.Labels[k] != v {
			return false
		}
	}
	for k, v := range d.Annotations {
		if live.Annotations[k] != v {
			return false
		}
	}
	want, err := asJSON(d.Spec)
	if err != nil {
		return false
	}
	got, err := asJSON(live.Spec)
	if err != nil {
		return false
	}
	return subset(want, got)
}

// subset says whether every field of want is in got with the same value:
// objects compared field by field, anything else as a whole.
func subset(want, got any) bool {
	wm, ok := want.(map[string]any)
	if !ok {
		return reflect.DeepEqual(want, got)
	}
	gm, ok := got.(map[string]any)
	if !ok {
		return false
	}
	for k, wv := range wm {
		if !subset(wv, gm[k]) {
			return false
		}
	}
	return true
}

// asJSON is v as generic JSON.
func asJSON(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding: %w", err)
	}
	var out any
	return out, json.Unmarshal(raw, &out)
}
