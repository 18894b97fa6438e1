package command

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
)

func newPlanDiffCommand(f *factory) *cobra.Command {
	var against string
	var applied bool
	var ignore []string
	cmd := &cobra.Command{
		Use:   "diff WORKSPACE --against OTHER [--applied]",
		Short: "Compare the stored plans of two Workspaces, resource by resource",
		Long: `Compare the current plan of WORKSPACE with the current plan of OTHER (e.g. prod's
plan with the one dev applied): which resource changes are the same (address,
actions and planned values), which differ and in which attributes, and which
are in one plan only. Values are never printed (a plan's values may be
sensitive): only the names of the attributes that differ. Exit code 0 when
the plans are the same change, 1 when they differ (as diff does).

With --applied, OTHER's plan must be the one it applied (status.lastApplied):
prod's plan is compared with what dev applied, and the command refuses when
dev has planned again since. --ignore-attributes leaves out attributes whose
values differ by design from one Workspace to the next (a name, a region tag).`,
		Example: `  kubectl magos plan diff prod --against dev
  kubectl magos plan diff prod --against dev --applied   # with what dev applied`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if against == "" {
				return usageError("plan diff needs --against OTHER: the Workspace whose plan to compare with")
			}
			return diffPlans(cmd.Context(), f, a[0], against, applied, ignore)
		},
	}
	cmd.Flags().StringVar(&against, "against", "", "the Workspace (same namespace) whose current plan to compare with")
	cmd.Flags().BoolVar(&applied, "applied", false, "compare with the plan OTHER applied, refusing when it planned again since")
	cmd.Flags().StringSliceVar(&ignore, "ignore-attributes", nil, "top-level attributes whose planned values are not compared (e.g. values that name each Workspace: tags,name)")
	return cmd
}

// plannedChange is what plan diff compares of one resource change.
type plannedChange struct {
	Actions []string
	After   map[string]json.RawMessage
}

func diffPlans(ctx context.Context, f *factory, name, other string, applied bool, ignore []string) error {
	t, ws, err := readWorkspace(ctx, f, name)
	if err != nil {
		return err
	}
	a, idA, err := loadChanges(ctx, t.planGetter(), ws, ignore)
	if err != nil {
		return err
	}
	_, otherWS, err := readWorkspace(ctx, f, other)
	if err != nil {
		return err
	}
	what := "plan %s of Workspace %s"
	if applied {
		if err := appliedIsCurrent(otherWS); err != nil {
			return err
		}
		what = "plan %s that Workspace %s applied (revision " + otherWS.Status.LastApplied.Revision + ")"
	}
	b, idB, err := loadChanges(ctx, t.planGetter(), otherWS, ignore)
	if err != nil {
		return err
	}
	out := f.streams.Out
	if len(ignore) > 0 {
		what += " (not comparing " + strings.Join(ignore, ", ") + ")"
	}
	fmt.Fprintf(out, "Plan %s of Workspace %s against "+what+":\n", idA, name, idB, other)
	differ := writeDiff(out, name, other, a, b)
	if differ == 0 {
		fmt.Fprintln(out, "The plans are the same change.")
		return nil
	}
	return newError(ExitFailure, ReasonFailed, "the plans differ in %d resource change(s)", differ)
}

// appliedIsCurrent refuses a Workspace whose stored plan is not the one it
// applied last: only one plan per Workspace is stored.
func appliedIsCurrent(ws *magosv1.Workspace) error {
	la, p := ws.Status.LastApplied, ws.Status.Plan
	switch {
	case la == nil:
		return newError(ExitFailure, ReasonNotFound, "Workspace %s has applied no plan yet", ws.Name)
	case p == nil || p.ID != la.PlanID:
		return failed("Workspace %s has planned again since it applied plan %s (its plan is now %s), and only its current plan is stored: compare with that one (without --applied)",
			ws.Name, la.PlanID, orNone(planID(p)))
	}
	return nil
}

func planID(p *magosv1.PlanStatus) string {
	if p == nil {
		return ""
	}
	return p.ID
}

// writeDiff writes how changes a (of Workspace nameA) and b differ and
// returns the number of resource changes that differ.
func writeDiff(out io.Writer, nameA, nameB string, a, b map[string]plannedChange) int {
	same, differ := 0, 0
	for _, addr := range slices.Sorted(maps.Keys(a)) {
		ca := a[addr]
		cb, ok := b[addr]
		switch {
		case !ok:
			differ++
			fmt.Fprintf(out, "  only in %s: %s (%s)\n", nameA, addr, strings.Join(ca.Actions, ", "))
		case !slices.Equal(ca.Actions, cb.Actions):
			differ++
			fmt.Fprintf(out, "  ~ %s: %s in %s, %s in %s\n", addr, strings.Join(ca.Actions, ", "), nameA, strings.Join(cb.Actions, ", "), nameB)
		default:
			if attrs := differingAttributes(ca.After, cb.After); len(attrs) > 0 {
				differ++
				fmt.Fprintf(out, "  ~ %s (%s): differs in %s\n", addr, strings.Join(ca.Actions, ", "), strings.Join(attrs, ", "))
			} else {
				same++
			}
		}
	}
	for _, addr := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[addr]; !ok {
			differ++
			fmt.Fprintf(out, "  only in %s: %s (%s)\n", nameB, addr, strings.Join(b[addr].Actions, ", "))
		}
	}
	fmt.Fprintf(out, "  %d resource change(s) the same, %d different\n", same, differ)
	return differ
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
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// loadChanges reads the resource changes (no-ops left out) of Workspace
// ws's current stored plan, checked against its status, without the
// planned values of the ignored top-level attributes.
func loadChanges(ctx context.Context, g planstore.Getter, ws *magosv1.Workspace, ignore []string) (map[string]plannedChange, string, error) {
	name, p := ws.Name, ws.Status.Plan
	if p == nil {
		return nil, "", newError(ExitFailure, ReasonNotFound, "Workspace %s has no plan yet (phase %s)", name, orNone(string(ws.Status.Phase)))
	}
	stored, err := loadPlanJSON(ctx, g, name, p)
	if err != nil {
		return nil, "", err
	}
	if len(stored.JSON) == 0 {
		return nil, "", newError(ExitFailure, ReasonNotFound, "plan %s of Workspace %s has no plan JSON to compare (%s)", p.ID, name, noJSONWhy(p))
	}
	var doc struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				Actions []string                   `json:"actions"`
				After   map[string]json.RawMessage `json:"after"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal(stored.JSON, &doc); err != nil {
		return nil, "", failed("the plan JSON of Workspace %s does not parse: %v", name, err)
	}
	changes := map[string]plannedChange{}
	for _, rc := range doc.ResourceChanges {
		if slices.Equal(rc.Change.Actions, []string{"no-op"}) {
			continue
		}
		for _, attr := range ignore {
			delete(rc.Change.After, attr)
		}
		changes[rc.Address] = plannedChange{Actions: rc.Change.Actions, After: rc.Change.After}
	}
	return changes, p.ID, nil
}

// noJSONWhy says why a stored plan has no JSON.
func noJSONWhy(p *magosv1.PlanStatus) string {
	if p.AppliedWithoutGate {
		return "it was planned and applied without a gate in one run, which renders none"
	}
	return "it was stored without one"
}
