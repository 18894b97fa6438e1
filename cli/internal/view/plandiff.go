package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/magos-dev/magos/cli/internal/planchange"
)

// WriteDiff writes how changes a (of Workspace nameA) and b differ and
// returns the number of resource changes that differ and the other parts
// that do (outputs, configuration, engine version…).
func WriteDiff(out io.Writer, nameA, nameB string, a, b planchange.Change) (differ int, parts []string) {
	same := 0
	for _, addr := range slices.Sorted(maps.Keys(a.Resources)) {
		ca := a.Resources[addr]
		cb, ok := b.Resources[addr]
		switch {
		case !ok:
			differ++
			fmt.Fprintf(out, "  only in %s: %s (%s)\n", nameA, addr, strings.Join(ca.Actions, ", "))
		case !slices.Equal(ca.Actions, cb.Actions):
			differ++
			fmt.Fprintf(out, "  ~ %s: %s in %s, %s in %s\n", addr, strings.Join(ca.Actions, ", "), nameA, strings.Join(cb.Actions, ", "), nameB)
		default:
			attrs, fields := differingAttributes(ca.After, cb.After), planchange.DifferingFields(ca.Rest, cb.Rest)
			switch {
			case len(attrs) > 0 && len(fields) > 0:
				differ++
				fmt.Fprintf(out, "  ~ %s (%s): differs in %s; and in %s\n", addr, strings.Join(ca.Actions, ", "), strings.Join(attrs, ", "), strings.Join(fields, ", "))
			case len(attrs) > 0:
				differ++
				fmt.Fprintf(out, "  ~ %s (%s): differs in %s\n", addr, strings.Join(ca.Actions, ", "), strings.Join(attrs, ", "))
			case len(fields) > 0:
				differ++
				fmt.Fprintf(out, "  ~ %s (%s): differs in %s\n", addr, strings.Join(ca.Actions, ", "), strings.Join(fields, ", "))
			default:
				same++
			}
		}
	}
	for _, addr := range slices.Sorted(maps.Keys(b.Resources)) {
		if _, ok := a.Resources[addr]; !ok {
			differ++
			fmt.Fprintf(out, "  only in %s: %s (%s)\n", nameB, addr, strings.Join(b.Resources[addr].Actions, ", "))
		}
	}
	fmt.Fprintf(out, "  %d resource change(s) the same, %d different\n", same, differ)
	parts = planchange.DifferingParts(a, b)
	for _, p := range parts {
		fmt.Fprintf(out, "  ~ %s: differs\n", p)
	}
	return differ, parts
}

// differingAttributes are the top-level attributes whose planned values
// differ, sorted.
func differingAttributes(a, b map[string]json.RawMessage) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if v, ok := b[k]; !ok || !jsonEqual(a[k], v) {
			out = append(out, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func jsonEqual(a, b json.RawMessage) bool {
	x, errA := planchange.Canonical(a)
	y, errB := planchange.Canonical(b)
	if errA != nil || errB != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(x, y)
}
