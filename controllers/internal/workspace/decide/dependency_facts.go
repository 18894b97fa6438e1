package decide

import (
	"fmt"
	"strings"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// DependencyFacts are what spec.dependsOn decides on.
type DependencyFacts struct {
	// States are the dependencies' states, in spec order.
	States []magosv1.DependencyStatus
	// Cycle is a path of names from the Workspace back to itself, if any.
	Cycle []string
	// Dependents are the Workspaces that depend on this one (read while it
	// is deleted).
	Dependents []string
}

// ready says whether every dependency is Ready.
func (d DependencyFacts) ready() bool {
	for _, s := range d.States {
		if !s.Ready {
			return false
		}
	}
	return true
}

// holdForDependencies keeps decision d, which starts a run, from starting
// it while the dependencies say no: a cycle stalls; a dependency that is
// not Ready, or (while deleted) a dependent that still exists, waits.
func holdForDependencies(f Facts, d Decision) Decision {
	if d.Action != ActStart || f.Dependencies == nil {
		return d
	}
	deps := f.Dependencies
	switch {
	case f.Deletion != nil && len(deps.Dependents) > 0:
		return Decision{Phase: magosv1.PhaseWaiting, Reason: magosv1.ReasonDependentsExist,
			Message: fmt.Sprintf("The Workspace is being deleted and waits for the Workspaces that depend on it to be deleted first: %s", strings.Join(deps.Dependents, ", "))}
	case f.Deletion != nil:
		return d
	case len(deps.Cycle) > 0:
		return Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonDependencyCycle, Stalled: true,
			Message: "spec.dependsOn forms a cycle: " + strings.Join(deps.Cycle, " → ")}
	case !deps.ready():
		var waits []string
		for _, s := range deps.States {
			if !s.Ready {
				waits = append(waits, s.Message)
			}
		}
		return Decision{Phase: magosv1.PhaseWaiting, Reason: magosv1.ReasonDependencyNotReady,
			Message: "Waiting for dependencies: " + strings.Join(waits, "; ")}
	}
	return d
}
