package reconciletail_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/reconciletail"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// TestReconcileSkeleton: the skeleton reads the object, gives the body
// the object and a base copy as read, asks the tail after the body, and
// writes the status the tail computes from the body's error; an object
// that is gone runs Gone and nothing else.
func TestReconcileSkeleton(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, variableSet())
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "vs"}}
	var steps []string
	skeleton := reconciletail.Skeleton[*magosv1.VariableSet]{
		Gone: func() { steps = append(steps, "gone") },
		Body: func(_ context.Context, vs, base *magosv1.VariableSet) (ctrl.Result, error) {
			steps = append(steps, "body")
			assert.Equal(t, "vs", vs.Name)
			assert.Equal(t, vs, base, "the base is the object as read")
			assert.NotSame(t, vs, base)
			vs.Status.Env = nil
			return ctrl.Result{}, rerror.Stall("Broken", assert.AnError)
		},
		Tail: func(vs, _ *magosv1.VariableSet) reconciletail.Options {
			steps = append(steps, "tail")
			return reconciletail.Options{Kind: magosv1.VariableSetKind, Status: markReady(vs)}
		},
	}
	_, err := reconciletail.Reconcile(ctx, f.client, req, &magosv1.VariableSet{}, skeleton)
	require.Error(t, err, "a stall is a terminal error")
	assert.Equal(t, []string{"body", "tail"}, steps)
	assert.Equal(t, 1, f.patches, "the status the tail computed is written")
	stored, _ := f.read(t)
	assert.True(t, conditions.IsTrue(stored, magosv1.StalledCondition), "the body's error is in status")

	steps = nil
	req.Name = "gone"
	res, err := reconciletail.Reconcile(ctx, f.client, req, &magosv1.VariableSet{}, skeleton)
	require.NoError(t, err)
	assert.Equal(t, ctrl.Result{}, res)
	assert.Equal(t, []string{"gone"}, steps, "a gone object runs Gone, not the body or the tail")
	assert.Equal(t, 1, f.patches)
}
