// Package reconciletail is the end of every Magos Reconcile: it computes
// status, writes it only when it changed (with the optimistic lock where
// status carries state across reconciles), then emits the events buffered
// during the reconcile and runs the caller's after-patch hook, records the
// reconcile metric and maps the error for controller-runtime.
//
// Events are emitted only once the status that explains them is written: a
// reconcile whose patch conflicts emits nothing, and its retry records the
// same events again, so none is emitted twice.
//
//	func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
//		obj := &magosv1.Project{}
//		// get obj ...
//		base, ev, obs := obj.DeepCopy(), &reconciletail.EventBuffer{}, observation{}
//		defer func() {
//			res, err = reconciletail.Finish(ctx, r.Client, obj, base, res, err, reconciletail.Options{
//				Kind:     magosv1.ProjectKind,
//				Status:   func(err error) { obs.Err = err; computeStatus(obj, obs) },
//				Events:   ev,
//				Recorder: r.Events,
//			})
//		}()
//		// sub-reconcilers record events into ev ...
//	}
package reconciletail
