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
actions, planned values, which values are unknown or sensitive, replacement
paths, provider…), which differ and in which attributes or fields, and which
are in one plan only; then whether the outputs, the configuration the plan
is applied with (provisioners, expressions, module calls) and the engine
version differ. Values are never printed (a plan's values may be
sensitive): only the names of what differs. Exit code 0 when the plans are
the same change, 1 when they differ (as diff does).

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

func diffPlans(ctx context.Context, f *factory, name, other string, applied bool, ignore []string) error {
	t, ws, err := readWorkspace(ctx, f, name)
	if err != nil {
		return err
	}
	a, planA, err := loadChanges(ctx, t.planGetter(), ws, ignore)
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
	b, planB, err := loadChanges(ctx, t.planGetter(), otherWS, ignore)
	if err != nil {
		return err
	}
	out := f.streams.Out
	if len(ignore) > 0 {
		what += " (not comparing " + strings.Join(ignore, ", ") + ")"
	}
	fmt.Fprintf(out, "Plan %s of Workspace %s against "+what+":\n", planA.ID, name, planB.ID, other)
	differ, parts := writeDiff(out, name, other, a, b)
	switch {
	case differ == 0 && len(parts) == 0:
		fmt.Fprintln(out, "The plans are the same change.")
		return nil
	case len(parts) == 0:
		return newError(ExitFailure, ReasonFailed, "the plans differ in %d resource change(s)", differ)
	}
	return newError(ExitFailure, ReasonFailed, "the plans differ in %d resource change(s) and in %s", differ, strings.Join(parts, "; "))
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
// returns the number of resource changes that differ and the other parts
// that do (outputs, configuration, engine version…).
func writeDiff(out io.Writer, nameA, nameB string, a, b planChange) (differ int, parts []string) {
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
			attrs, fields := differingAttributes(ca.After, cb.After), differingFields(ca.Rest, cb.Rest)
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
	parts = differingParts(a, b)
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
	x, errA := canonical(a)
	y, errB := canonical(b)
	if errA != nil || errB != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(x, y)
}

// loadChanges reads the change (parseChange) of Workspace ws's current
// stored plan, checked against its status (ID and digest), without the
// ignored top-level attributes, and returns it with the plan it read.
func loadChanges(ctx context.Context, g planstore.Getter, ws *magosv1.Workspace, ignore []string) (planChange, *magosv1.PlanStatus, error) {
	name, p := ws.Name, ws.Status.Plan
	if p == nil {
		return planChange{}, nil, newError(ExitFailure, ReasonNotFound, "Workspace %s has no plan yet (phase %s)", name, orNone(string(ws.Status.Phase)))
	}
	stored, err := loadPlanJSON(ctx, g, name, p)
	if err != nil {
		return planChange{}, nil, err
	}
	if len(stored.JSON) == 0 {
		return planChange{}, nil, newError(ExitFailure, ReasonNotFound, "plan %s of Workspace %s has no plan JSON to compare (%s)", p.ID, name, noJSONWhy(p))
	}
	c, err := parseChange(stored.JSON, ignore)
	if err != nil {
		return planChange{}, nil, failed("the plan JSON of Workspace %s does not parse: %v", name, err)
	}
	return c, p, nil
}

// noJSONWhy says why a stored plan has no JSON.
func noJSONWhy(p *magosv1.PlanStatus) string {
	if p.AppliedWithoutGate {
		return "it was planned and applied without a gate in one run, which renders none"
	}
	return "it was stored without one"
}
