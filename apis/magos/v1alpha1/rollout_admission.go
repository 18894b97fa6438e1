package v1alpha1

import (
	"fmt"
	"slices"
)

// How a Workspace reads its Rollout: the rollout-controller writes the
// stages' admissions into the Rollout's status, and the
// workspace-controller decides from that status alone whether a plan may
// apply.

// GoverningRollout returns the Rollout that governs the Workspaces of Project
// project among rollouts (all of one namespace), or nil: the oldest one
// attached to the Project (by creation, then name). A younger Rollout of the
// same Project is Stalled and admits nothing.
func GoverningRollout(rollouts []Rollout, project string) *Rollout {
	var gov *Rollout
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

// older orders Rollouts by creation, then name.
func older(a, b *Rollout) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Name < b.Name
}

// RolloutDecision is whether a Workspace may apply a plan under a Rollout.
// +kubebuilder:object:generate=false
type RolloutDecision struct {
	Allowed bool
	// Message says what the Workspace waits for when not Allowed.
	Message string
}

// RolloutAdmission decides from ro's status alone whether Workspace ws may apply
// a plan of revision: its stage must have admitted that revision and name
// the Workspace among those that may apply now (maxParallel). A revision
// the Workspace already applied (a drift correction) is allowed; a
// Workspace in no stage never applies while ro covers its Project.
func RolloutAdmission(ro *Rollout, ws *Workspace, revision string) RolloutDecision {
	if ro == nil {
		return RolloutDecision{Allowed: true}
	}
	if slices.Contains(ro.Status.UnstagedWorkspaces, ws.Name) {
		return RolloutDecision{Message: fmt.Sprintf("No stage of Rollout %s selects this Workspace; it does not apply while the Rollout covers Project %s",
			ro.Name, ro.Spec.ProjectRef.Name)}
	}
	i := slices.IndexFunc(ro.Status.Stages, func(st StageStatus) bool {
		return slices.ContainsFunc(st.Workspaces, func(w StageWorkspace) bool { return w.Name == ws.Name })
	})
	if i < 0 {
		return RolloutDecision{Message: fmt.Sprintf("Waits for Rollout %s to place this Workspace in a stage", ro.Name)}
	}
	st := ro.Status.Stages[i]
	if a := ws.Status.LastApplied; a != nil && a.Revision == revision {
		return RolloutDecision{Allowed: true}
	}
	if st.AdmittedRevision != revision {
		return RolloutDecision{Message: fmt.Sprintf("Waits for stage %s of Rollout %s to admit revision %s (the stage is %s)",
			st.Name, ro.Name, revision, st.Phase)}
	}
	if !slices.Contains(st.AdmittedWorkspaces, ws.Name) {
		if st.Phase == StageHalted {
			return RolloutDecision{Message: fmt.Sprintf("Stage %s of Rollout %s is halted; see the Rollout's status", st.Name, ro.Name)}
		}
		return RolloutDecision{Message: fmt.Sprintf("Waits for a free slot in stage %s of Rollout %s (%d applying at once)",
			st.Name, ro.Name, len(st.AdmittedWorkspaces))}
	}
	return RolloutDecision{Allowed: true}
}
