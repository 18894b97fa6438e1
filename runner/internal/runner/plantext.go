package runner

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/runner/internal/engine"
)

// planText renders the saved plan for people, as stored in plan.txt: the
// engine's `show -no-color`, masked, without control characters and cut to
// planstore.MaxTextBytes. The plan does not depend on it: when the engine
// cannot render it, the plan is stored without a text.
func (r *runner) planText(ctx context.Context, eng *engine.Engine, planFile string) []byte {
	text, err := eng.PlanText(ctx, planFile)
	if err != nil {
		r.log.Warn("Rendering the plan as text failed; storing the plan without it", "error", engine.Summary(err))
		return nil
	}
	return readableText(text, r.mask, planstore.MaxTextBytes)
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
