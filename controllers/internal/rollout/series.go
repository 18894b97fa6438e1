package rollout

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/rollout/progress"
)

// rolloutSeries lists the Rollouts of the cache r as the series a scrape
// exports (magos_resource_info and magos_rollouts_halted), reading the
// cache's objects without copying them.
func rolloutSeries(ctx context.Context, r client.Reader) ([]metrics.ObjectSeries, error) {
	var list magosv1.RolloutList
	if err := r.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make([]metrics.ObjectSeries, 0, len(list.Items))
	for i := range list.Items {
		ro := &list.Items[i]
		out = append(out, metrics.ObjectSeries{Kind: magosv1.RolloutKind, Namespace: ro.Namespace, Name: ro.Name, Conditions: ro.Status.Conditions,
			Info:   metrics.ResourceInfo{Suspended: ro.Spec.Suspend, Phase: string(rolloutPhase(ro.Status.Stages)), Revision: ro.Status.Revision},
			Halted: progress.HaltedStage(ro.Status.Stages) != nil})
	}
	return out, nil
}

// rolloutPhase sums up the stages in one phase: Halted if a stage is
// halted, else the phase of the first stage that has not succeeded, else
// Succeeded; "" without stages.
func rolloutPhase(stages []magosv1.StageStatus) magosv1.StagePhase {
	if len(stages) == 0 {
		return ""
	}
	if halted := progress.HaltedStage(stages); halted != nil {
		return magosv1.StageHalted
	}
	if current := progress.CurrentStage(stages); current != nil {
		return current.Phase
	}
	return magosv1.StageSucceeded
}
