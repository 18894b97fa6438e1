// Package rerror defines reconcile errors that carry a condition Reason, so
// the error returned, the condition set and the event recorded agree.
package rerror
