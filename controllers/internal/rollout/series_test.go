package rollout

import (
	"testing"

	"github.com/stretchr/testify/assert"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func TestRolloutPhase(t *testing.T) {
	stages := func(phases ...magosv1.StagePhase) []magosv1.StageStatus {
		var out []magosv1.StageStatus
		for i, p := range phases {
			out = append(out, magosv1.StageStatus{Name: string(rune('a' + i)), Phase: p})
		}
		return out
	}
	tests := []struct {
		name   string
		stages []magosv1.StageStatus
		want   magosv1.StagePhase
	}{
		{"no stages", nil, ""},
		{"the first stage pending", stages(magosv1.StagePending, magosv1.StagePending), magosv1.StagePending},
		{"the first unfinished stage bakes", stages(magosv1.StageSucceeded, magosv1.StageBaking, magosv1.StagePending), magosv1.StageBaking},
		{"waiting for promotion", stages(magosv1.StageSucceeded, magosv1.StageWaitingForPromotion), magosv1.StageWaitingForPromotion},
		{"a halted stage wins over an earlier unfinished one", stages(magosv1.StageProgressing, magosv1.StageHalted), magosv1.StageHalted},
		{"every stage succeeded", stages(magosv1.StageSucceeded, magosv1.StageSucceeded), magosv1.StageSucceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, rolloutPhase(tt.stages))
		})
	}
}
