package decide

import (
	"fmt"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// deletionRun says whether rs is one of a deletion's runs: a destroy plan,
// its apply or a destroy without a plan.
func deletionRun(rs *magosv1.RunStatus) bool {
	return rs.Phase == magosv1.RunDestroy || rs.Mode == magosv1.PlanModeDestroy
}

// destroyed says whether rs destroyed the Workspace's resources: a
// succeeded destroy, or a succeeded apply of a destroy plan.
func destroyed(rs *magosv1.RunStatus) bool {
	if rs.Result != magosv1.ResultSucceeded {
		return false
	}
	return rs.Phase == magosv1.RunDestroy || (rs.Phase == magosv1.RunApply && rs.Mode == magosv1.PlanModeDestroy)
}

// DeletionNotes are the events of a deleted Workspace let go (decision d,
// ActFinishDeletion): its resources were destroyed, or they cannot be and
// are left in place with the state Secret of Workspace name.
func DeletionNotes(name string, d Decision) []Note {
	switch {
	case d.Reason == magosv1.ReasonDestroySkipped:
		return []Note{{Warning, magosv1.ReasonDestroySkipped, fmt.Sprintf(
			"Cannot destroy: %s; the Workspace is deleted, its resources and state Secret %s are left in place", d.Message, magosv1.StateSecretName(name))}}
	case d.Message != "":
		return []Note{{Normal, magosv1.ReasonDestroyed, d.Message}}
	}
	return nil
}

// PlanOnlyNotDestroyed is the event of a deleted PlanOnly Workspace: it
// never changes resources, so deleting it does not destroy them either
// (who may only plan may not destroy by deleting).
func PlanOnlyNotDestroyed(name string) Note {
	return Note{Warning, magosv1.ReasonDestroySkipped, fmt.Sprintf(
		"Not destroying: the Workspace is PlanOnly, which never changes resources; they are left in place with the state Secret %s", magosv1.StateSecretName(name))}
}

// TransitionNotes are the events of a reconcile's status going from
// before to after under decision d: the approval rules' (ReviewNotes),
// and d's event when the Workspace enters d: its phase or Ready reason
// changed.
func TransitionNotes(before, after *magosv1.Workspace, d Decision) []Note {
	notes := ReviewNotes(before.Status.Plan, after.Status.Plan)
	if d.Event == nil {
		return notes
	}
	was, is := conditions.Get(before, magosv1.ReadyCondition), conditions.Get(after, magosv1.ReadyCondition)
	if before.Status.Phase == after.Status.Phase && was != nil && is != nil && was.Reason == is.Reason {
		return notes
	}
	return append(notes, *d.Event)
}
