package reconciletail_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/reconciletail"
)

func TestRecordConditionTransition(t *testing.T) {
	withReady := func(status metav1.ConditionStatus, reason string) *magosv1.VariableSet {
		vs := variableSet()
		conditions.MarkReady(vs, status, reason, "msg "+reason)
		return vs
	}
	cases := []struct {
		name      string
		base, now *magosv1.VariableSet
		want      []string
	}{
		{"appears True", variableSet(), withReady(metav1.ConditionTrue, "Rendered"), []string{"Normal Rendered msg Rendered"}},
		{"turns False", withReady(metav1.ConditionTrue, "Rendered"), withReady(metav1.ConditionFalse, "ReferenceNotFound"), []string{"Warning ReferenceNotFound msg ReferenceNotFound"}},
		{"same status, new reason", withReady(metav1.ConditionFalse, "A"), withReady(metav1.ConditionFalse, "B"), nil},
		{"absent", variableSet(), variableSet(), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := events.NewFakeRecorder(10)
			reconciletail.RecordConditionTransition(rec, tc.base, tc.now, magosv1.ReadyCondition)
			assert.Equal(t, tc.want, received(rec))
		})
	}
	// A nil recorder is allowed (reconcilers built without one in tests).
	reconciletail.RecordConditionTransition(nil, variableSet(), withReady(metav1.ConditionTrue, "Rendered"), magosv1.ReadyCondition)
}
