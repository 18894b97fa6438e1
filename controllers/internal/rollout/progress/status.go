package progress

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// Observation is how one reconcile of a Rollout ended, which its status
// reports besides the stages.
type Observation struct {
	// Aborted is set when the abort annotation names the revision.
	Aborted bool
	// Err is the reconcile's error; a rerror.Wait while the Rollout waits
	// for its source or Workspaces.
	Err error
}

// ComputeStatus sets the conditions and observedGeneration from the stages
// already in ro.Status and the observation. It is pure.
func ComputeStatus(ro *magosv1.Rollout, o Observation) {
	st := &ro.Status
	// Written on every path, errors included: kstatus reads a stale
	// observedGeneration as InProgress, hiding Stalled.
	defer func() { st.ObservedGeneration = ro.Generation }()
	waiting := rerror.IsWaiting(o.Err)
	if o.Err != nil && !waiting {
		conditions.MarkError(ro, o.Err)
		return
	}
	halted := HaltedStage(st.Stages)
	if halted == nil || waiting {
		conditions.Set(ro, magosv1.HaltedCondition, metav1.ConditionFalse, magosv1.ReasonNotHalted, "No stage is halted")
	}
	if waiting {
		conditions.MarkError(ro, o.Err)
		return
	}
	if halted != nil {
		reason := magosv1.ReasonWorkspaceFailed
		if o.Aborted {
			reason = magosv1.ReasonAborted
		}
		msg := fmt.Sprintf("Stage %s is halted: %s", halted.Name, halted.Message)
		conditions.Set(ro, magosv1.HaltedCondition, metav1.ConditionTrue, reason, msg)
		conditions.MarkStalled(ro, reason, msg)
		return
	}
	unstaged := ""
	if n := len(st.UnstagedWorkspaces); n > 0 {
		unstaged = fmt.Sprintf("; %d Workspaces are in no stage and do not apply: %s", n, strings.Join(st.UnstagedWorkspaces, ", "))
	}
	current := CurrentStage(st.Stages)
	switch {
	case current == nil:
		conditions.MarkReady(ro, metav1.ConditionTrue, magosv1.ReasonRolledOut,
			fmt.Sprintf("Revision %s is rolled out to all %d stages%s", st.Revision, len(st.Stages), unstaged))
	case current.Phase == magosv1.StageWaitingForPromotion:
		// Waiting for a person: kstatus reads it as Current, Ready stays
		// False (docs/workspaces.md says why).
		conditions.MarkReady(ro, metav1.ConditionFalse, string(current.Phase), fmt.Sprintf("Stage %s: %s%s", current.Name, current.Message, unstaged))
	case current.Phase == magosv1.StagePending && ro.Spec.Suspend:
		conditions.MarkReady(ro, metav1.ConditionFalse, magosv1.SuspendedReason, fmt.Sprintf("Suspended before stage %s%s", current.Name, unstaged))
	default:
		conditions.MarkReconciling(ro, string(current.Phase), fmt.Sprintf("Stage %s: %s%s", current.Name, current.Message, unstaged))
	}
}

// HaltedStage is the first halted stage, if any.
func HaltedStage(stages []magosv1.StageStatus) *magosv1.StageStatus {
	for i := range stages {
		if stages[i].Phase == magosv1.StageHalted {
			return &stages[i]
		}
	}
	return nil
}

// CurrentStage is the first stage that has not succeeded, if any.
func CurrentStage(stages []magosv1.StageStatus) *magosv1.StageStatus {
	for i := range stages {
		if stages[i].Phase != magosv1.StageSucceeded {
			return &stages[i]
		}
	}
	return nil
}
