package setplan

import (
	"errors"
	"fmt"
	"strings"
)

// maxRefusalsShown bounds the refused elements a message names.
const maxRefusalsShown = 5

// RefusedError says which elements are refused and why, and what the set
// does meanwhile with the applied ones.
func RefusedError(refused []Refusal, applied int) error {
	var b strings.Builder
	if applied == 0 {
		fmt.Fprintf(&b, "spec.template: every element is refused; nothing was changed: ")
	} else {
		fmt.Fprintf(&b, "spec.template: %d of %d elements are refused; the other %d are applied, and no Workspace is removed until every element renders: ",
			len(refused), len(refused)+applied, applied)
	}
	for i, r := range refused[:min(len(refused), maxRefusalsShown)] {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "element (%s): %s", r.Element, r.Reason)
	}
	if len(refused) > maxRefusalsShown {
		fmt.Fprintf(&b, "; and %d more", len(refused)-maxRefusalsShown)
	}
	return errors.New(b.String())
}
