package variableset

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

// TestVariableSetKstatus: every state of a VariableSet reads right to kstatus.
func TestVariableSetKstatus(t *testing.T) {
	tests := []struct {
		name string
		obs  observation
		want status.Status
	}{
		{"rendered", observation{Rendered: &rendered{Digest: "sha256:a"}}, status.CurrentStatus},
		{"waiting for a reference", observation{Rendered: &rendered{Missing: []string{"Secret s not found"}}}, status.InProgressStatus},
		{"read error", observation{Err: rerror.Retry(magosv1.ReasonReferenceReadFailed, errors.New("connection refused"))}, status.InProgressStatus},
		{"invalid spec", observation{Err: rerror.Stall(magosv1.InvalidSpecReason, errors.New("bad"))}, status.FailedStatus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Name: "vs", Namespace: "ns", Generation: 3}}
			vs.Status.ObservedGeneration = 2
			computeStatus(vs, tt.obs)
			got := kstatustest.Compute(t, vs)
			assert.Equal(t, tt.want, got.Status, "kstatus message: %s", got.Message)
			assert.True(t, got.Standard, "decided by Reconciling/Stalled/observedGeneration alone")
		})
	}
}
