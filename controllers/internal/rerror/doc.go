// Package rerror defines reconcile errors that carry a condition Reason, so
// the error returned, the condition set and the event recorded agree.
//
// It links no controller-runtime, so the pure packages (the Workspace's
// decide and runjob, conditions) may use it; the reconcile tail
// (controllers/internal/reconciletail) maps an Error to what
// controller-runtime expects.
package rerror
