// Package reconciletail is every Magos Reconcile's skeleton (Reconcile:
// get the object, keep the patch base, run the kind's Body) and its end
// (Finish, called once Body returned, not deferred): Finish computes
// status, writes it only when it changed (with the optimistic lock where
// status carries state across reconciles), then emits the events buffered
// during the reconcile and runs the caller's after-patch hook, records the
// reconcile metric and maps the error for controller-runtime.
//
// Events are emitted only once the status that explains them is written: a
// reconcile whose patch conflicts emits nothing, and its retry records the
// same events again, so none is emitted twice.
//
//	func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
//		obs := observation{}
//		ev := &reconciletail.EventBuffer{}
//		return reconciletail.Reconcile(ctx, r.Client, req, &magosv1.Project{}, reconciletail.Skeleton[*magosv1.Project]{
//			// Body handles deletion, the finalizer and suspend, then runs the
//			// sub-reconcilers, which fill obs and record events into ev.
//			Body: func(ctx context.Context, p, base *magosv1.Project) (ctrl.Result, error) {
//				return r.reconcile(ctx, p, &obs, ev)
//			},
//			// Finish runs once Body returned, whatever it returned.
//			Tail: func(p, base *magosv1.Project) reconciletail.Options {
//				return reconciletail.Options{
//					Kind:     magosv1.ProjectKind,
//					Status:   func(err error) { obs.Err = err; computeStatus(p, obs) },
//					Events:   ev,
//					Recorder: r.Events,
//				}
//			},
//		})
//	}
package reconciletail
