package reconciletail_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/reconciletail"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// fixture is a fake apiserver holding one VariableSet with a status
// subresource, counting status patches.
type fixture struct {
	client  client.Client
	patches int
	// onPatch runs before each status patch is applied.
	onPatch func()
}

func newFixture(t *testing.T, objs ...client.Object) *fixture {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, magosv1.AddToScheme(s))
	f := &fixture{}
	f.client = fake.NewClientBuilder().
		WithScheme(s).
		WithStatusSubresource(&magosv1.VariableSet{}).
		WithObjects(objs...).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				f.patches++
				if f.onPatch != nil {
					f.onPatch()
				}
				return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		}).
		Build()
	return f
}

func variableSet() *magosv1.VariableSet {
	return &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vs", Generation: 1}}
}

// read returns the stored VariableSet and a base copy, as a reconcile
// starts.
func (f *fixture) read(t *testing.T) (obj, base *magosv1.VariableSet) {
	t.Helper()
	obj = &magosv1.VariableSet{}
	require.NoError(t, f.client.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "vs"}, obj))
	return obj, obj.DeepCopy()
}

func markReady(obj *magosv1.VariableSet) func(error) {
	return func(err error) {
		if err != nil {
			conditions.MarkError(obj, err)
			return
		}
		conditions.MarkReady(obj, metav1.ConditionTrue, "Rendered", "All references found")
	}
}

func received(rec *events.FakeRecorder) []string {
	var got []string
	for {
		select {
		case e := <-rec.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}

func TestFinishWritesAChangedStatusThenFlushesEventsInOrder(t *testing.T) {
	f := newFixture(t, variableSet())
	obj, base := f.read(t)
	rec := events.NewFakeRecorder(10)
	f.onPatch = func() { assert.Empty(t, rec.Events, "no event may be emitted before the status patch") }
	ev := &reconciletail.EventBuffer{}
	ev.Eventf(obj, nil, corev1.EventTypeNormal, "First", "Reconcile", "one %d", 1)
	ev.Eventf(obj, nil, corev1.EventTypeWarning, "Second", "Reconcile", "two")
	hooked := false

	res, err := reconciletail.Finish(context.Background(), f.client, obj, base, ctrl.Result{RequeueAfter: 5}, nil, reconciletail.Options{
		Kind: "TailTest", Status: markReady(obj), Events: ev, Recorder: rec,
		AfterPatch: func() { hooked = true },
	})

	require.NoError(t, err)
	assert.Equal(t, ctrl.Result{RequeueAfter: 5}, res)
	assert.Equal(t, 1, f.patches)
	stored, _ := f.read(t)
	assert.True(t, conditions.IsTrue(stored, magosv1.ReadyCondition))
	assert.Equal(t, []string{"Normal First one 1", "Warning Second two"}, received(rec))
	assert.True(t, hooked)
	assert.Zero(t, ev.Len(), "flushed events leave the buffer")
}

// outcome is what one Finish with one buffered event did.
type outcome struct {
	res    ctrl.Result
	err    error
	events []string
	hooked bool
}

// finishWithEvent ends a reconcile of obj that recorded one event and
// marks obj Ready (or records reconcileErr).
func (f *fixture) finishWithEvent(obj, base *magosv1.VariableSet, reconcileErr error, lock bool) outcome {
	rec := events.NewFakeRecorder(10)
	ev := &reconciletail.EventBuffer{}
	ev.Eventf(obj, nil, corev1.EventTypeNormal, "Rendered", "Reconcile", "rendered")
	var o outcome
	o.res, o.err = reconciletail.Finish(context.Background(), f.client, obj, base, ctrl.Result{RequeueAfter: 5}, reconcileErr, reconciletail.Options{
		Kind: "TailTest", Status: markReady(obj), OptimisticLock: lock, Events: ev, Recorder: rec,
		AfterPatch: func() { o.hooked = true },
	})
	o.events = received(rec)
	return o
}

// staleRead returns the VariableSet as a reconcile read it, then has
// someone else write the object.
func (f *fixture) staleRead(t *testing.T) (obj, base *magosv1.VariableSet) {
	t.Helper()
	obj, base = f.read(t)
	other, _ := f.read(t)
	other.Labels = map[string]string{"moved": "on"}
	require.NoError(t, f.client.Update(context.Background(), other))
	return obj, base
}

func TestFinishDoesNotWriteAnUnchangedStatus(t *testing.T) {
	for _, lock := range []bool{false, true} {
		vs := variableSet()
		conditions.MarkReady(vs, metav1.ConditionTrue, "Rendered", "All references found")
		f := newFixture(t, vs)
		obj, base := f.read(t)

		o := f.finishWithEvent(obj, base, nil, lock)

		require.NoError(t, o.err)
		assert.Zero(t, f.patches, "lock=%v: an unchanged status is not written", lock)
		assert.Equal(t, []string{"Normal Rendered rendered"}, o.events, "nothing needed writing, so events go out")
		assert.True(t, o.hooked)
	}
}

func TestFinishOnConflictEmitsNothingAndRetriesOnce(t *testing.T) {
	f := newFixture(t, variableSet())
	obj, base := f.staleRead(t)

	// Even a stalling reconcile error must not make the conflict terminal:
	// the status that says it stalls was not written.
	stall := rerror.Stall(magosv1.InvalidSpecReason, errors.New("bad spec"))
	o := f.finishWithEvent(obj, base, stall, true)

	require.Error(t, o.err)
	assert.True(t, apierrors.IsConflict(o.err), "got %v", o.err)
	assert.NotErrorIs(t, o.err, reconcile.TerminalError(nil))
	assert.Contains(t, o.err.Error(), "bad spec")
	assert.Equal(t, ctrl.Result{}, o.res)
	assert.Empty(t, o.events, "a conflict emits no event")
	assert.False(t, o.hooked)

	// The retry reads the new object and records its events again.
	obj, base = f.read(t)
	o = f.finishWithEvent(obj, base, nil, true)
	require.NoError(t, o.err)
	assert.Equal(t, []string{"Normal Rendered rendered"}, o.events, "each event is emitted once")
	assert.True(t, o.hooked)
}

func TestFinishWithoutTheLockMergesOverAStaleRead(t *testing.T) {
	f := newFixture(t, variableSet())
	obj, base := f.staleRead(t)

	o := f.finishWithEvent(obj, base, nil, false)

	require.NoError(t, o.err)
	stored, _ := f.read(t)
	assert.True(t, conditions.IsTrue(stored, magosv1.ReadyCondition))
	assert.Equal(t, "on", stored.Labels["moved"])
}

func TestFinishIgnoresAnObjectDeletedMeanwhile(t *testing.T) {
	f := newFixture(t, variableSet())
	obj, base := f.read(t)
	require.NoError(t, f.client.Delete(context.Background(), obj.DeepCopy()))

	o := f.finishWithEvent(obj, base, nil, true)

	require.NoError(t, o.err)
	assert.Equal(t, 1, f.patches)
	assert.Empty(t, o.events, "no event about an object that is gone")
	assert.False(t, o.hooked)
}

func TestFinishMapsTheReconcileError(t *testing.T) {
	retry := rerror.Retry("Busy", errors.New("busy"))
	plain := errors.New("transient")
	stall := rerror.Stall(magosv1.InvalidSpecReason, errors.New("bad spec"))
	wait := rerror.Wait("SourceNotReady", "no artifact yet", 2)
	cases := []struct {
		name        string
		err         error
		wantErr     error
		terminal    bool
		want        ctrl.Result
		reconciling string
	}{
		{name: "retry", err: retry, wantErr: retry, reconciling: magosv1.ProgressingWithRetryReason},
		{name: "plain", err: plain, wantErr: plain, reconciling: magosv1.ProgressingWithRetryReason},
		{name: "stall", err: stall, wantErr: stall, terminal: true},
		{name: "wait", err: wait, want: ctrl.Result{RequeueAfter: 2}, reconciling: "SourceNotReady"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, variableSet())
			obj, base := f.read(t)

			o := f.finishWithEvent(obj, base, tc.err, false)

			if tc.wantErr == nil {
				require.NoError(t, o.err)
			} else {
				require.ErrorIs(t, o.err, tc.wantErr)
			}
			assert.Equal(t, tc.terminal, errors.Is(o.err, reconcile.TerminalError(nil)))
			assert.Equal(t, tc.want, o.res)
			stored, _ := f.read(t)
			assert.False(t, conditions.IsTrue(stored, magosv1.ReadyCondition), "status records the error")
			if c := conditions.Get(stored, magosv1.ReconcilingCondition); tc.reconciling != "" {
				require.NotNil(t, c)
				assert.Equal(t, tc.reconciling, c.Reason)
			}
			assert.Equal(t, []string{"Normal Rendered rendered"}, o.events, "status is written, so events go out")
		})
	}
}
