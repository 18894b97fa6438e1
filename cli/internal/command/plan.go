package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/cli/internal/planrender"
)

// maxPlanJSONBytes bounds the plan JSON `plan show --json` and the summary
// read, as the controller's policy gate bounds it.
const maxPlanJSONBytes = 256 << 20

func newPlanCommand(f *factory) *cobra.Command {
	plan := &cobra.Command{
		Use:     "plan",
		Short:   "Read the stored plan of a Workspace",
		Example: "  kubectl magos plan show hello",
		Args:    args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError("plan needs a subcommand: plan show WORKSPACE, plan diff WORKSPACE --against OTHER")
		},
	}
	var asJSON, engineText bool
	show := &cobra.Command{
		Use:   "show WORKSPACE",
		Short: "Show the stored plan of a Workspace with its policy verdict",
		Long: `Show the current plan of a Workspace, rendered here from the plan JSON whose
digest status records (the JSON the policy gate evaluated, an approval
approves and the apply proves it applies; sensitive values are not shown),
then the policy verdict and its violations from status. With --json, print
that plan JSON.

The text the plan run printed is not shown as the plan: the run executed the
configuration's code, which can write that text, and no digest covers it.
--engine-text prints it after the rendering, marked as not verified. A plan
applied without a gate (in the run that made it) has no plan JSON to render:
its text is shown, marked as not verified.`,
		Example: `  kubectl magos plan show hello
  kubectl magos plan show hello --json | jq '.resource_changes[].address'`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if asJSON && engineText {
				return usageError("plan show takes --json or --engine-text, not both")
			}
			return showPlan(cmd.Context(), f, a[0], asJSON, engineText)
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print the plan JSON (the engine's show -json output)")
	show.Flags().BoolVar(&engineText, "engine-text", false, "also print the text the plan run stored (not verified: no digest covers it)")
	plan.AddCommand(show, newPlanDiffCommand(f))
	return plan
}

func showPlan(ctx context.Context, f *factory, name string, asJSON, engineText bool) error {
	t, ws, err := readWorkspace(ctx, f, name)
	if err != nil {
		return err
	}
	p := ws.Status.Plan
	if p == nil {
		return newError(ExitFailure, ReasonNotFound, "Workspace %s has no plan yet (phase %s)", name, orNone(string(ws.Status.Phase)))
	}
	g := t.planGetter()
	out := f.streams.Out
	if asJSON {
		stored, err := loadPlanJSON(ctx, g, name, p)
		if err != nil {
			return err
		}
		if len(stored.JSON) == 0 && p.AppliedWithoutGate {
			return newError(ExitFailure, ReasonNotFound, "plan %s of Workspace %s was applied without a gate in the run that made it, which renders no plan JSON; "+
				"kubectl magos plan show %s prints what the engine printed", p.ID, name, name)
		}
		_, err = out.Write(stored.JSON)
		return err
	}
	return writePlan(ctx, out, g, name, p, secretVariables(ctx, t.c, ws), engineText)
}

// writePlan writes plan p of Workspace name as plan show shows it: what it
// is, who approved it, the readable plan with where it comes from (masked
// as opts says), the run's own text when asked for, and the policy
// verdict.
func writePlan(ctx context.Context, out io.Writer, g planstore.Getter, name string, p *magosv1.PlanStatus, opts planrender.Options, engineText bool) error {
	shown, err := readablePlan(ctx, g, name, p, opts)
	if err != nil {
		return err
	}
	var runText string
	if engineText && shown.Verified {
		if runText, err = storedText(ctx, g, name, p); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "Plan %s of Workspace %s, revision %s: %s\n", p.ID, name, orNone(p.Revision), planCounts(p))
	if p.AppliedWithoutGate {
		fmt.Fprintf(out, "Planned and applied without a gate in one run: nothing decided on it (approval Auto, no policy, no Rollout gate); stored bundle %s, verified\n\n", p.BundleDigest)
	} else {
		fmt.Fprintf(out, "Digest %s (stored bundle %s, verified)\n", p.Digest, p.BundleDigest)
		writeApprovals(out, p)
		fmt.Fprintln(out)
	}
	fmt.Fprintln(out, shown.Source)
	fmt.Fprintln(out)
	fmt.Fprintln(out, strings.TrimRight(shown.Text, "\n"))
	fmt.Fprintln(out)
	if engineText && shown.Verified {
		fmt.Fprintln(out, runTextSource)
		fmt.Fprintln(out)
		if runText == "" {
			fmt.Fprintln(out, "(the plan run stored no text)")
		} else {
			fmt.Fprintln(out, strings.TrimRight(runText, "\n"))
		}
		fmt.Fprintln(out)
	}
	if p.AppliedWithoutGate {
		fmt.Fprintln(out, "Policy: none selected the Workspace when the run started")
		return nil
	}
	writeVerdict(out, p.Policy)
	return nil
}

// Where a readable plan comes from, as plan show and the UI say it.
const (
	renderedSource = "Rendered by kubectl magos from the plan JSON the digest covers (what the gate evaluated and the apply proves it applies):"
	runTextSource  = "NOT VERIFIED: the text the plan run stored. No digest covers it and the run's configuration code could have written it; approve from the rendering above, never from this text:"
	fastTextSource = "NOT VERIFIED: the text the engine printed in the run that planned and applied it (no digest covers it; nothing decided on it):"
	fastJSONSource = "NOT VERIFIED: rendered from the plan JSON of the run that planned and applied it (no apply proved it; nothing decided on it):"
)

// readable is a plan as shown to people.
type readable struct {
	// Text is the plan for people.
	Text string
	// Verified is true when Text was rendered here from the plan JSON
	// whose digest status records, which the apply proves it applies;
	// false when it is text the run stored, or a plan applied without a
	// gate, which nothing verifies.
	Verified bool
	// Source says where Text comes from.
	Source string
}

// readablePlan is plan p rendered for people. A plan that went through
// the gate is rendered from its digest-checked plan JSON (masked as opts
// says), never from the text its run stored. A plan applied without a
// gate has no plan JSON (unless its run had to render one): its stored
// text is shown, marked as not verified.
func readablePlan(ctx context.Context, g planstore.Getter, name string, p *magosv1.PlanStatus, opts planrender.Options) (readable, error) {
	if p.AppliedWithoutGate {
		text, err := storedText(ctx, g, name, p)
		if err != nil || text != "" {
			return readable{Text: text, Source: fastTextSource}, err
		}
	}
	stored, err := loadPlanJSON(ctx, g, name, p)
	if err != nil {
		return readable{}, err
	}
	if len(stored.JSON) == 0 {
		return readable{}, failed("the stored plan %s of Workspace %s has no plan JSON to render", p.ID, name)
	}
	text, err := planrender.Render(stored.JSON, opts)
	if err != nil {
		return readable{}, failed("the stored plan %s of Workspace %s cannot be rendered: %v", p.ID, name, err)
	}
	if p.AppliedWithoutGate {
		return readable{Text: text, Source: fastJSONSource}, nil
	}
	return readable{Text: text, Verified: true, Source: renderedSource}, nil
}

// storedText is the text the run stored with plan p, control characters
// removed; "" when it stored none.
func storedText(ctx context.Context, g planstore.Getter, name string, p *magosv1.PlanStatus) (string, error) {
	stored, err := planstore.LoadTextSealed(ctx, g, name, planstore.MaxTextBytes, p.BundleDigest)
	if errors.Is(err, planstore.ErrNoText) {
		return "", nil
	}
	if err != nil {
		return "", planError(name, err)
	}
	if err := samePlan(stored, p); err != nil {
		return "", err
	}
	return printable(string(stored.Text)), nil
}

// planGetter reads the plan Secrets of the target's namespace.
func (t *target) planGetter() planstore.Getter {
	return planstore.GetterFunc(func(ctx context.Context, secret string) (*corev1.Secret, error) {
		s := &corev1.Secret{}
		return s, t.c.Get(ctx, clientKey(t.key.Namespace, secret), s)
	})
}

// loadPlanJSON is Workspace name's stored plan with its JSON, sealed and
// checked to be plan p of its status.
func loadPlanJSON(ctx context.Context, g planstore.Getter, name string, p *magosv1.PlanStatus) (*planstore.Plan, error) {
	stored, err := planstore.LoadJSONSealed(ctx, g, name, maxPlanJSONBytes, p.BundleDigest)
	if err != nil {
		return nil, planError(name, err)
	}
	if err := samePlan(stored, p); err != nil {
		return nil, err
	}
	return stored, nil
}

// samePlan refuses a stored plan other than the one status shows: another
// ID (a new plan being stored) or, for the same ID, another digest.
func samePlan(stored *planstore.Plan, p *magosv1.PlanStatus) error {
	if stored.ID != p.ID {
		return failed("the stored plan is %s but status shows plan %s: the Workspace is planning again; retry in a moment", stored.ID, p.ID)
	}
	if stored.Digest != p.Digest {
		return failed("the stored plan %s has digest %s but status records %s: it is not the plan the gate and an approval see; do not approve it", stored.ID, stored.Digest, p.Digest)
	}
	return nil
}

func clientKey(namespace, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: namespace, Name: name}
}

func planError(name string, err error) error {
	if errors.Is(err, planstore.ErrCorrupt) {
		return failed("the stored plan of Workspace %s is not the one recorded in its status (%v): do not approve it; it is made again before any apply", name, err)
	}
	if errors.Is(err, planstore.ErrNotFound) {
		return newError(ExitFailure, ReasonNotFound, "the plan of Workspace %s is no longer stored (%v); it plans again on its next run", name, err)
	}
	return failed("reading the plan of Workspace %s: %v", name, err)
}

// writeVerdict writes the policy verdict and its violations.
func writeVerdict(w io.Writer, v *magosv1.PolicyVerdict) {
	switch {
	case v == nil:
		fmt.Fprintln(w, "Policy: not evaluated yet")
		return
	case v.Passed:
		fmt.Fprintf(w, "Policy: Passed (%s)\n", orNone(strings.Join(v.Policies, ", ")))
	default:
		fmt.Fprintf(w, "Policy: Failed: %s\n", v.Message)
	}
	for _, vi := range v.Violations {
		fmt.Fprintf(w, "  - %s [%s] validation %d: %s\n", vi.Policy, orNone(vi.Action), vi.Validation, vi.Message)
	}
}

// printable drops control characters other than newline and tab: the text
// is written by the runner and may hold escape sequences.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || (r >= 0x20 && r != 0x7f && (r < 0x80 || r > 0x9f)) {
			return r
		}
		return -1
	}, s)
}

// writeApprovals says who approved plan p, and when.
func writeApprovals(w io.Writer, p *magosv1.PlanStatus) {
	for _, a := range p.Approvals {
		groups := ""
		if len(a.Groups) > 0 {
			groups = " (groups " + strings.Join(a.Groups, ", ") + ")"
		}
		fmt.Fprintf(w, "Approved by %s%s at %s\n", a.User, groups, a.Time.UTC().Format(time.RFC3339))
	}
}
