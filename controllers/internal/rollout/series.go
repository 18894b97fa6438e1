package rollout

import (
	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/metrics"
)

// trackSeries sets the per-object series of ro (magos_rollouts_halted and
// magos_resource_info) from its status as written.
func trackSeries(key string, ro *magosv1.Rollout) {
	metrics.TrackRollout(key, haltedStage(ro.Status.Stages) != nil)
	metrics.TrackResource(magosv1.RolloutKind, ro, metrics.ResourceInfo{
		Suspended: ro.Spec.Suspend, Phase: string(rolloutPhase(ro.Status.Stages)), Revision: ro.Status.Revision,
	})
}

// forgetSeries deletes the per-object series of a Rollout that is gone.
func forgetSeries(key, namespace, name string) {
	metrics.TrackRollout(key, false)
	metrics.ForgetResource(magosv1.RolloutKind, namespace, name)
}

// rolloutPhase sums up the stages in one phase: Halted if a stage is
// halted, else the phase of the first stage that has not succeeded, else
// Succeeded; "" without stages.
func rolloutPhase(stages []magosv1.StageStatus) magosv1.StagePhase {
	if len(stages) == 0 {
		return ""
	}
	if halted := haltedStage(stages); halted != nil {
		return magosv1.StageHalted
	}
	if current := currentStage(stages); current != nil {
		return current.Phase
	}
	return magosv1.StageSucceeded
}
