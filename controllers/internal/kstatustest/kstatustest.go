package kstatustest

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// Result is what kstatus concludes about an object.
type Result struct {
	Status  status.Status
	Message string
	// Standard is true when the standard conditions alone (Reconciling,
	// Stalled, observedGeneration) give the same Status. It is false when
	// kstatus needed its Ready fallback, which cannot tell a failure that
	// is retried from one that never recovers, and which not every
	// consumer of the conventions implements.
	Standard bool
}

// Compute converts obj to unstructured and returns kstatus's verdict.
func Compute(t testing.TB, obj runtime.Object) Result {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	require.NoError(t, err)
	full := compute(t, u)

	conds, _, err := unstructured.NestedSlice(u, "status", "conditions")
	require.NoError(t, err)
	var kept []any
	for _, c := range conds {
		if m, ok := c.(map[string]any); !ok || m["type"] != "Ready" {
			kept = append(kept, c)
		}
	}
	require.NoError(t, unstructured.SetNestedSlice(u, kept, "status", "conditions"))
	return Result{Status: full.Status, Message: full.Message, Standard: compute(t, u).Status == full.Status}
}

func compute(t testing.TB, obj map[string]any) *status.Result {
	t.Helper()
	res, err := status.Compute(&unstructured.Unstructured{Object: obj})
	require.NoError(t, err)
	return res
}
