package progress

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/kstatustest"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// TestRolloutKstatus: every state of a Rollout reads right to kstatus.
func TestRolloutKstatus(t *testing.T) {
	stages := func(phases ...magosv1.StagePhase) []magosv1.StageStatus {
		var s []magosv1.StageStatus
		for i, p := range phases {
			s = append(s, magosv1.StageStatus{Name: string(rune('a' + i)), Phase: p, Message: "m"})
		}
		return s
	}
	tests := []struct {
		name    string
		stages  []magosv1.StageStatus
		suspend bool
		obs     Observation
		want    status.Status
		// waitsForPerson: left to kstatus's Ready fallback.
		waitsForPerson bool
	}{
		{name: "rolled out", stages: stages(magosv1.StageSucceeded, magosv1.StageSucceeded), want: status.CurrentStatus},
		{name: "progressing", stages: stages(magosv1.StageSucceeded, magosv1.StageProgressing), want: status.InProgressStatus},
		{name: "baking", stages: stages(magosv1.StageBaking, magosv1.StagePending), want: status.InProgressStatus},
		{name: "pending", stages: stages(magosv1.StagePending), want: status.InProgressStatus},
		{name: "waiting for the source", obs: Observation{Err: rerror.Wait(magosv1.ReasonSourceNotReady, "no artifact", 0)}, want: status.InProgressStatus},
		{name: "waiting for promotion", stages: stages(magosv1.StageSucceeded, magosv1.StageWaitingForPromotion), want: status.InProgressStatus, waitsForPerson: true},
		{name: "suspended before a stage", stages: stages(magosv1.StageSucceeded, magosv1.StagePending), suspend: true, want: status.InProgressStatus, waitsForPerson: true},
		{name: "halted by a failed Workspace", stages: stages(magosv1.StageHalted), want: status.FailedStatus},
		{name: "aborted", stages: stages(magosv1.StageHalted), obs: Observation{Aborted: true}, want: status.FailedStatus},
		{name: "list error", obs: Observation{Err: rerror.Retry(magosv1.ReasonListFailed, errors.New("timeout"))}, want: status.InProgressStatus},
		{name: "conflicting Rollouts", obs: Observation{Err: rerror.Stall(magosv1.ReasonConflictingRollout, errors.New("both"))}, want: status.FailedStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ro := &magosv1.Rollout{ObjectMeta: metav1.ObjectMeta{Name: "ro", Namespace: "ns", Generation: 3}}
			ro.Spec.Suspend = tt.suspend
			ro.Status.ObservedGeneration, ro.Status.Stages = 2, tt.stages
			ComputeStatus(ro, tt.obs)
			got := kstatustest.Compute(t, ro)
			assert.Equal(t, tt.want, got.Status, "kstatus message: %s", got.Message)
			assert.Equal(t, !tt.waitsForPerson, got.Standard, "decided by Reconciling/Stalled/observedGeneration alone")
		})
	}
}
