package project

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

// TestProjectKstatus: every state of a Project reads right to kstatus.
func TestProjectKstatus(t *testing.T) {
	tests := []struct {
		name string
		obs  observation
		want status.Status
	}{
		{"resolved", observation{Resolved: &resolved{}}, status.CurrentStatus},
		{"resolved with a VariableSet not Ready", observation{Resolved: &resolved{}, VariableSetsObserved: true,
			VariableSets: []variableSetState{{Name: "gone"}}}, status.CurrentStatus},
		{"list error", observation{Err: rerror.Retry(magosv1.ReasonListFailed, errors.New("timeout"))}, status.InProgressStatus},
		{"invalid spec", observation{Err: rerror.Stall(magosv1.InvalidSpecReason, errors.New("bad glob"))}, status.FailedStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Generation: 3}}
			p.Status.ObservedGeneration = 2
			computeStatus(p, tt.obs)
			got := kstatustest.Compute(t, p)
			assert.Equal(t, tt.want, got.Status, "kstatus message: %s", got.Message)
			assert.True(t, got.Standard, "decided by Reconciling/Stalled/observedGeneration alone")
		})
	}
}
