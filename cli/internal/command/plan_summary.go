package command

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/apis/plansummary"
)

// summarize lists the resource changes of a plan JSON, one per line with
// its action's sign, for a plan stored without a rendering.
func summarize(raw []byte) (string, error) {
	p, err := plansummary.Parse(raw)
	if err != nil {
		return "", failed("the stored plan JSON cannot be read: %v", err)
	}
	var b strings.Builder
	for _, rc := range p.ResourceChanges {
		sign := actionSign(rc.Change.Actions)
		if sign == "" {
			continue
		}
		fmt.Fprintf(&b, "  %s %s\n", sign, printable(rc.Address))
	}
	if b.Len() == 0 {
		return "No changes.", nil
	}
	return "Resource changes:\n" + b.String(), nil
}

// actionSign is how the engine marks an action list: + create, ~ update,
// - delete, -/+ or +/- replace; "" for no-op and read.
func actionSign(actions []string) string {
	switch {
	case slices.Equal(actions, []string{"create"}):
		return "+"
	case slices.Equal(actions, []string{"update"}):
		return "~"
	case slices.Equal(actions, []string{"delete"}):
		return "-"
	case slices.Equal(actions, []string{"delete", "create"}):
		return "-/+"
	case slices.Equal(actions, []string{"create", "delete"}):
		return "+/-"
	}
	return ""
}

func clientKey(namespace, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: namespace, Name: name}
}
