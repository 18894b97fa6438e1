package rollout

import (
	"fmt"
	"slices"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Governing returns the Rollout that governs the Workspaces of Project
// project among rollouts (all of one namespace), or nil: the oldest one
// attached to the Project (by creation, then name). A younger Rollout of the
// same Project is Stalled and admits nothing.
func Governing(rollouts []magosv1.Rollout, project string) *magosv1.Rollout {
	var gov *magosv1.Rollout
	for i := range rollouts {
		ro := &rollouts[i]
		if ro.Spec.ProjectRef.Name != project || !ro.DeletionTimestamp.IsZero() {
			continue
		}
		if gov == nil || older(ro, gov) {
			gov = ro
		}
	}
	return gov
}

func older(a, b *magosv1.Rollout) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// Decision is whether a Workspace may apply a plan under a Rollout.
type Decision struct {
	Allowed bool
	// Message says what the Workspace waits for when not Allowed.
	Message string
}

// Admission decides from ro's status alone whether Workspace ws may apply
// a plan of revision: its stage must have admitted that revision and name
// the Workspace among those that may apply now (maxParallel). A revision
// the Workspace already applied (a drift correction) is allowed; a
// Workspace in no stage never applies while ro covers its Project.
func Admission(ro *magosv1.Rollout, ws *magosv1.Workspace, revision string) Decision {
	if ro == nil {
		return Decision{Allowed: true}
	}
	if slices.Contains(ro.Status.UnstagedWorkspaces, ws.Name) {
		return Decision{Message: fmt.Sprintf("No stage of Rollout %s selects this Workspace; it does not apply while the Rollout covers Project %s",
			ro.Name, ro.Spec.ProjectRef.Name)}
	}
	i := slices.IndexFunc(ro.Status.Stages, func(st magosv1.StageStatus) bool {
		return slices.ContainsFunc(st.Workspaces, func(w magosv1.StageWorkspace) bool { return w.Name == ws.Name })
	})
	if i < 0 {
		return Decision{Message: fmt.Sprintf("Waits for Rollout %s to place this Workspace in a stage", ro.Name)}
	}
	st := ro.Status.Stages[i]
	if a := ws.Status.LastApplied; a != nil && a.Revision == revision {
		return Decision{Allowed: true}
	}
	if st.AdmittedRevision != revision {
		return Decision{Message: fmt.Sprintf("Waits for stage %s of Rollout %s to admit revision %s (the stage is %s)",
			st.Name, ro.Name, revision, st.Phase)}
	}
	if !slices.Contains(st.AdmittedWorkspaces, ws.Name) {
		if st.Phase == magosv1.StageHalted {
			return Decision{Message: fmt.Sprintf("Stage %s of Rollout %s is halted; see the Rollout's status", st.Name, ro.Name)}
		}
		return Decision{Message: fmt.Sprintf("Waits for a free slot in stage %s of Rollout %s (%d applying at once)",
			st.Name, ro.Name, len(st.AdmittedWorkspaces))}
	}
	return Decision{Allowed: true}
}
