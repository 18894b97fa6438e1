package conditions_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/kstatustest"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// TestMarkError: each kind of reconcile error sets the conditions kstatus
// reads as intended, replacing those of a previous state.
func TestMarkError(t *testing.T) {
	tests := []struct {
		name        string
		err         error
		wantStalled bool
		// Reasons of Ready, Reconciling and Stalled; "" means absent.
		ready, reconciling, stalled string
		kstatus                     status.Status
	}{
		{
			name: "plain error", err: errors.New("timeout"),
			ready: magosv1.ProgressingWithRetryReason, reconciling: magosv1.ProgressingWithRetryReason,
			kstatus: status.InProgressStatus,
		},
		{
			name: "retry", err: rerror.Retry("ListFailed", errors.New("timeout")),
			ready: "ListFailed", reconciling: magosv1.ProgressingWithRetryReason,
			kstatus: status.InProgressStatus,
		},
		{
			name: "stall", err: rerror.Stall(magosv1.InvalidSpecReason, errors.New("bad selector")), wantStalled: true,
			ready: magosv1.InvalidSpecReason, stalled: magosv1.InvalidSpecReason,
			kstatus: status.FailedStatus,
		},
		{
			name: "wait", err: rerror.Wait("SourceNotReady", "GitRepository ns/app has no artifact yet", time.Minute),
			ready: "SourceNotReady", reconciling: "SourceNotReady",
			kstatus: status.InProgressStatus,
		},
	}
	reason := func(vs *magosv1.VariableSet, typ string) string {
		if c := conditions.Get(vs, typ); c != nil {
			return c.Reason
		}
		return ""
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Name: "vs", Namespace: "ns", Generation: 2}}
			vs.Status.ObservedGeneration = 2
			// A previous state with every condition set.
			conditions.MarkStalled(vs, "Old", "old")
			conditions.Set(vs, magosv1.ReconcilingCondition, metav1.ConditionTrue, "Old", "old")

			stalled := conditions.MarkError(vs, tt.err)

			assert.Equal(t, tt.wantStalled, stalled)
			assert.Equal(t, tt.ready, reason(vs, magosv1.ReadyCondition))
			assert.Equal(t, tt.reconciling, reason(vs, magosv1.ReconcilingCondition))
			assert.Equal(t, tt.stalled, reason(vs, magosv1.StalledCondition))
			assert.False(t, conditions.IsTrue(vs, magosv1.ReadyCondition))
			assert.Equal(t, tt.err.Error(), conditions.Get(vs, magosv1.ReadyCondition).Message)
			assert.Equal(t, tt.kstatus, kstatustest.Compute(t, vs).Status)
		})
	}
}
