package view

import (
	"fmt"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// What an action says once done, as the commands print it and the UI
// answers it.

// Approved says that user approved plan p (ID id) of Workspace name.
func Approved(name, id, user string, p *magosv1.PlanStatus) string {
	return fmt.Sprintf("Workspace %s: plan %s approved by %s (%s)", name, id, user, PlanCounts(p))
}

// Promoted says that stage of Rollout name was promoted for revision.
func Promoted(name string, p magosv1.Promotion) string {
	return fmt.Sprintf("Rollout %s: stage %s promoted for revision %s", name, p.Stage, p.Revision)
}

// ReconcileRequested says that Workspace name was asked to reconcile at at.
func ReconcileRequested(name, at string) string {
	return fmt.Sprintf("Workspace %s: reconcile requested at %s", name, at)
}

// LockHeld says who holds the state lock of Workspace name.
func LockHeld(name string, lock *magosv1.LockStatus) string {
	return fmt.Sprintf("Workspace %s: the state lock (Lease %s) is held by %s", name, lock.Lease, lock.Holder)
}

// UnlockRequested says that the release of holder's lock was asked for.
func UnlockRequested(name, holder string) string {
	return fmt.Sprintf("Workspace %s: unlock of %s requested", name, holder)
}

// Suspended says what spec.suspend of the kind's object name now is.
func Suspended(kind, name string, suspend bool) string {
	return fmt.Sprintf("%s %s: spec.suspend=%t", kind, name, suspend)
}
