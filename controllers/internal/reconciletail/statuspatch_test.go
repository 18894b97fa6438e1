package reconciletail

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestStatusPatchCarriesStatusAlone: the status patch holds the change of
// status (a cleared field as null), the resourceVersion under the lock and
// nothing of metadata or spec; equal statuses, a nil and an empty list
// among them, need none.
func TestStatusPatchCarriesStatusAlone(t *testing.T) {
	base := &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: "ws", ResourceVersion: "7"},
		Spec:   magosv1.WorkspaceSpec{Path: "./a"},
		Status: magosv1.WorkspaceStatus{Phase: magosv1.PhasePlanning, LastHandledReconcileAt: "r1", Outputs: nil}}
	obj := base.DeepCopy()
	obj.Spec.Path = "./b"
	obj.Labels = map[string]string{"a": "b"}
	obj.Status.Outputs = []string{}

	data, err := statusPatch(obj, base, false)
	require.NoError(t, err)
	assert.Nil(t, data, "a nil and an empty list serialise alike; spec and metadata are not status")

	obj.Status.Phase = magosv1.PhaseIdle
	obj.Status.LastHandledReconcileAt = ""
	data, err = statusPatch(obj, base, false)
	require.NoError(t, err)
	assert.JSONEq(t, `{"status":{"phase":"Idle","lastHandledReconcileAt":null}}`, string(data))

	data, err = statusPatch(obj, base, true)
	require.NoError(t, err)
	assert.JSONEq(t, `{"metadata":{"resourceVersion":"7"},"status":{"phase":"Idle","lastHandledReconcileAt":null}}`, string(data))
}
