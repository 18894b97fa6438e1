package runner

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/apis/plansummary"
	"github.com/magos-dev/magos/runner/internal/engine"
)

// planText renders the saved plan for people, as stored in plan.txt: the
// rendering the engine printed while it planned (printed, without the
// refresh and read progress before it), else the engine's `show -no-color`
// of the plan file; masked, without control characters and cut to
// planstore.MaxTextBytes. Taking what plan printed saves starting the
// engine once more to load the plan again. The plan does not depend on the
// text: when the engine cannot render it, the plan is stored without one.
func (r *runner) planText(ctx context.Context, eng *engine.Engine, planFile string, printed *printedOutput) []byte {
	text, ok := printed.rendering()
	if !ok {
		var err error
		if text, err = eng.PlanText(ctx, planFile); err != nil {
			r.log.Warn("Rendering the plan as text failed; storing the plan without it", "error", engine.Summary(err))
			return nil
		}
	}
	return readableText(text, r.mask, planstore.MaxTextBytes)
}

// printedOutput keeps the first printedLimit bytes the engine prints while
// it plans; it never fails a write, so the engine's output is not cut
// short. printedLimit is twice what plan.txt stores: the text is masked
// before it is cut to planstore.MaxTextBytes, so a secret across the end of
// what is kept is cut away whole.
type printedOutput struct {
	buf  strings.Builder
	full bool
}

const printedLimit = 2 * planstore.MaxTextBytes

func (p *printedOutput) Write(b []byte) (int, error) {
	kept := b
	if room := printedLimit - p.buf.Len(); room < len(b) {
		p.full = true
		kept = b[:max(room, 0)]
	}
	p.buf.Write(kept)
	return len(b), nil
}

// progressLine matches the lines an engine prints as it refreshes and
// reads before it renders the plan.
var progressLine = regexp.MustCompile(`^\S+: (Refreshing state\.\.\.|Reading\.\.\.|Read complete after |Still reading\.\.\.|Still refreshing\.\.\.)`)

// planSummaryLine matches the line that ends every rendered plan: its
// counts, or that it has no changes.
var planSummaryLine = regexp.MustCompile(`(?m)^(Plan: \d+ to (add|import)|No changes\.|Changes to Outputs:)`)

// rendering is the plan as the engine printed it, from the first line
// after the progress lines on. ok is false when that is not a whole
// rendered plan (nothing kept, no summary line, or more printed than
// kept): then the caller asks the engine to show the plan instead.
func (p *printedOutput) rendering() (string, bool) {
	if p == nil || p.full {
		return "", false
	}
	rest := p.buf.String()
	for rest != "" {
		line, after, _ := strings.Cut(rest, "\n")
		if strings.TrimSpace(line) != "" && !progressLine.MatchString(line) {
			break
		}
		rest = after
	}
	if !planSummaryLine.MatchString(rest) {
		return "", false
	}
	return rest, true
}

// readableText masks text, replaces its control characters other than
// newline and tab (terminal escapes among them) with U+FFFD and cuts it to
// at most limit bytes at a line end, with a marker saying so. It masks
// before cutting, so no cut can leave part of a secret unmasked.
func readableText(text string, mask func(string) string, limit int) []byte {
	text = strings.Map(func(c rune) rune {
		if c != '\n' && c != '\t' && unicode.IsControl(c) {
			return utf8.RuneError
		}
		return c
	}, mask(text))
	if len(text) <= limit {
		return []byte(text)
	}
	marker := fmt.Sprintf("\n... (truncated: the plan text has %d bytes, more than the %d stored; the plan JSON holds the whole plan)\n", len(text), limit)
	cut := max(limit-len(marker), 0)
	if nl := strings.LastIndexByte(text[:cut], '\n'); nl >= 0 {
		cut = nl
	}
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	out := text[:cut] + marker
	return []byte(out[:min(len(out), limit)])
}

// printedSummary matches the counts line of a rendered plan, with the
// import and forget counts some engine versions print around them.
var printedSummary = regexp.MustCompile(`(?m)^Plan: (?:\d+ to import, )?(\d+) to add, (\d+) to change, (\d+) to destroy(?:, \d+ to forget)?\.`)

// printedCounts reads the counts of a plan from its rendering (printed's
// rendering): the "Plan: N to add, N to change, N to destroy." line, or
// none to count when the plan has no resource changes ("No changes.", or
// only "Changes to Outputs:"). ok is false when the text says neither.
func printedCounts(text string) (plansummary.Counts, bool) {
	if m := printedSummary.FindStringSubmatch(text); m != nil {
		n := func(s string) int32 { v, _ := strconv.ParseInt(s, 10, 32); return int32(v) }
		return plansummary.Counts{Add: n(m[1]), Change: n(m[2]), Destroy: n(m[3])}, true
	}
	if noResourceChanges.MatchString(text) && !strings.Contains(text, "\nPlan: ") && !strings.HasPrefix(text, "Plan: ") {
		return plansummary.Counts{}, true
	}
	return plansummary.Counts{}, false
}

// noResourceChanges matches the rendering of a plan that changes no
// resource: nothing at all, or only outputs.
var noResourceChanges = regexp.MustCompile(`(?m)^(No changes\.|Changes to Outputs:)`)
