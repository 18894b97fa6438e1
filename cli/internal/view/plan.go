package view

import (
	"fmt"
	"io"
	"strings"
	"time"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Where a readable plan comes from, as plan show and the UI say it.
const (
	RenderedSource = "Rendered by kubectl magos from the plan JSON the digest covers (what the gate evaluated and the apply proves it applies):"
	RunTextSource  = "NOT VERIFIED: the text the plan run stored. No digest covers it and the run's configuration code could have written it; approve from the rendering above, never from this text:"
	FastTextSource = "NOT VERIFIED: the text the engine printed in the run that planned and applied it (no digest covers it; nothing decided on it):"
	FastJSONSource = "NOT VERIFIED: rendered from the plan JSON of the run that planned and applied it (no apply proved it; nothing decided on it):"
)

// Readable is a plan as shown to people.
type Readable struct {
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

// WritePlan writes plan p of Workspace name as plan show shows it: what it
// is, who approved it, the readable plan with where it comes from, the
// text its run stored (runText) when withRunText, and the policy verdict.
func WritePlan(out io.Writer, name string, p *magosv1.PlanStatus, shown Readable, withRunText bool, runText string) {
	fmt.Fprintf(out, "Plan %s of Workspace %s, revision %s: %s\n", p.ID, name, OrNone(p.Revision), PlanCounts(p))
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
	if withRunText {
		fmt.Fprintln(out, RunTextSource)
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
		return
	}
	writeVerdict(out, p.Policy)
}

// writeVerdict writes the policy verdict and its violations.
func writeVerdict(w io.Writer, v *magosv1.PolicyVerdict) {
	switch {
	case v == nil:
		fmt.Fprintln(w, "Policy: not evaluated yet")
		return
	case v.Passed:
		fmt.Fprintf(w, "Policy: Passed (%s)\n", OrNone(strings.Join(v.Policies, ", ")))
	default:
		fmt.Fprintf(w, "Policy: Failed: %s\n", v.Message)
	}
	for _, vi := range v.Violations {
		fmt.Fprintf(w, "  - %s [%s] validation %d: %s\n", vi.Policy, OrNone(vi.Action), vi.Validation, vi.Message)
	}
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
