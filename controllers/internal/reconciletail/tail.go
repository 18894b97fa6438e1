package reconciletail

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/types"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/controllers/internal/metrics"
)

// Options says how one kind ends its reconcile.
type Options struct {
	// Kind labels the reconcile metric (magos_reconcile_results_total).
	Kind string
	// Status computes the object's status from what the reconcile observed
	// and its error (nil on success). It runs first and always.
	Status func(err error)
	// OptimisticLock makes the status patch fail with a conflict when the
	// object changed since it was read. Set it when status carries state
	// across reconciles, so a reconcile that read a stale object retries
	// instead of overwriting newer status.
	OptimisticLock bool
	// Events holds the events recorded during the reconcile; they are
	// emitted to Recorder once status is written. Optional.
	Events *EventBuffer
	// Recorder receives the buffered events. Nil drops them.
	Recorder events.EventRecorder
	// AfterPatch runs once status is written or needed no write (not when
	// the patch failed or the object is gone): transition events, metrics
	// that mirror the written status. Optional.
	AfterPatch func()
}

// Finish ends a Reconcile: it computes status, patches it if it changed,
// then (only when status is written or needed no write) flushes the
// buffered events and runs AfterPatch; it records the reconcile metric and
// returns what controller-runtime expects for res and err
// (forRuntimeResult): a wait (rerror.Wait) is no error, and
// requeues after its duration or on a watch event.
//
// A failed patch (a conflict under the optimistic lock, or any other
// error) drops the buffered events and returns an error to retry with
// backoff, whatever err was: the retry computes status again. A NotFound
// patch (the object was deleted meanwhile) is ignored.
func Finish(ctx context.Context, c client.StatusClient, obj, base client.Object, res ctrl.Result, err error, opts Options) (ctrl.Result, error) {
	if opts.Status != nil {
		opts.Status(err)
	}
	stored, patchErr := patchStatus(ctx, c, obj, base, opts.OptimisticLock)
	switch {
	case patchErr != nil:
		dropEvents(opts.Events)
		err = patchFailed(patchErr, err)
	case !stored:
		dropEvents(opts.Events)
	default:
		if opts.Events != nil {
			opts.Events.Flush(opts.Recorder)
		}
		if opts.AfterPatch != nil {
			opts.AfterPatch()
		}
	}
	metrics.RecordReconcile(opts.Kind, err)
	return forRuntimeResult(res, err)
}

// patchStatus writes obj's status when it differs from base's, as a merge
// patch of status alone computed once (statusPatch). It reports whether
// obj's status is stored: written, or unchanged; false when the object is
// gone.
func patchStatus(ctx context.Context, c client.StatusClient, obj, base client.Object, lock bool) (bool, error) {
	data, err := statusPatch(obj, base, lock)
	if err != nil || data == nil {
		return err == nil, err
	}
	if err := c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// statusPatch is the JSON merge patch that takes base's status to obj's,
// with base's resourceVersion under lock (the apiserver then refuses it
// with a conflict if the object changed since); nil when the serialised
// statuses are equal, so a write would change nothing the apiserver
// stores. Unlike reflect-based equality it treats a nil and an empty
// omitempty list alike, and times equal to the second as equal. Only the
// statuses are serialised and compared, not the whole objects: a status
// write is the most frequent write of every controller.
func statusPatch(obj, base client.Object, lock bool) ([]byte, error) {
	before, err := json.Marshal(statusOf(base))
	if err != nil {
		return nil, fmt.Errorf("computing the status patch: %w", err)
	}
	after, err := json.Marshal(statusOf(obj))
	if err != nil {
		return nil, fmt.Errorf("computing the status patch: %w", err)
	}
	if bytes.Equal(before, after) {
		return nil, nil
	}
	diff, err := jsonpatch.CreateMergePatch(before, after)
	if err != nil {
		return nil, fmt.Errorf("computing the status patch: %w", err)
	}
	if bytes.Equal(diff, []byte("{}")) {
		return nil, nil
	}
	patch := statusMergePatch{Status: diff}
	if lock {
		patch.Metadata = &lockMetadata{ResourceVersion: base.GetResourceVersion()}
	}
	return json.Marshal(patch)
}

// statusMergePatch is a merge patch of status, under the lock with the
// resourceVersion it was computed from.
type statusMergePatch struct {
	Metadata *lockMetadata   `json:"metadata,omitempty"`
	Status   json.RawMessage `json:"status"`
}

type lockMetadata struct {
	ResourceVersion string `json:"resourceVersion"`
}

// statusOf is obj's status: the Status field every kind of Magos has
// (and Kubernetes' own kinds).
func statusOf(obj client.Object) any {
	v := reflect.ValueOf(obj)
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	f := v.FieldByName("Status")
	if !f.IsValid() {
		return nil
	}
	return f.Interface()
}

// patchFailed is the error a reconcile returns when its status patch
// failed: retried with backoff even if the reconcile's own error stalls or
// waits, since the status that says so was not written. The reconcile's
// error is kept in the message only.
func patchFailed(patchErr, reconcileErr error) error {
	if reconcileErr == nil {
		return fmt.Errorf("patching status: %w", patchErr)
	}
	return fmt.Errorf("patching status: %w (reconcile error: %v)", patchErr, reconcileErr)
}

func dropEvents(b *EventBuffer) {
	if b != nil {
		b.Drop()
	}
}
