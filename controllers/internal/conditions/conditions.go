package conditions

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

// Setter is an object with status conditions.
type Setter interface {
	GetGeneration() int64
	GetConditions() []metav1.Condition
	SetConditions([]metav1.Condition)
}

// Set sets condition t on obj, stamped with obj's generation.
func Set(obj Setter, t string, status metav1.ConditionStatus, reason, message string) {
	c := obj.GetConditions()
	meta.SetStatusCondition(&c, metav1.Condition{
		Type:               t,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: obj.GetGeneration(),
	})
	obj.SetConditions(c)
}

// Delete removes condition t from obj.
func Delete(obj Setter, t string) {
	c := obj.GetConditions()
	meta.RemoveStatusCondition(&c, t)
	obj.SetConditions(c)
}

// Get returns condition t of obj, or nil.
func Get(obj Setter, t string) *metav1.Condition {
	return meta.FindStatusCondition(obj.GetConditions(), t)
}

// IsTrue reports whether condition t of obj is True.
func IsTrue(obj Setter, t string) bool {
	return meta.IsStatusConditionTrue(obj.GetConditions(), t)
}

// MarkReady records a finished reconciliation: Ready with the given status,
// Reconciling and Stalled removed.
func MarkReady(obj Setter, status metav1.ConditionStatus, reason, message string) {
	Set(obj, magosv1.ReadyCondition, status, reason, message)
	Delete(obj, magosv1.ReconcilingCondition)
	Delete(obj, magosv1.StalledCondition)
}

// MarkReconciling records work in progress: Reconciling True, Ready False
// with the same reason, Stalled removed.
func MarkReconciling(obj Setter, reason, message string) {
	Set(obj, magosv1.ReconcilingCondition, metav1.ConditionTrue, reason, message)
	Set(obj, magosv1.ReadyCondition, metav1.ConditionFalse, reason, message)
	Delete(obj, magosv1.StalledCondition)
}

// MarkStalled records an error that needs a spec change: Stalled True,
// Ready False, Reconciling removed.
func MarkStalled(obj Setter, reason, message string) {
	Set(obj, magosv1.StalledCondition, metav1.ConditionTrue, reason, message)
	Set(obj, magosv1.ReadyCondition, metav1.ConditionFalse, reason, message)
	Delete(obj, magosv1.ReconcilingCondition)
}

// MarkError records a reconciliation that ended with err: Stalled for an
// error that needs a spec change (a stalling rerror.Error); Reconciling
// and Ready False with the wait's own reason for a wait (rerror.Wait: not
// a failure, kstatus reads it as InProgress); otherwise Reconciling with
// reason ProgressingWithRetry and Ready False with the error's own reason.
// It reports whether the error stalls.
func MarkError(obj Setter, err error) (stalled bool) {
	e, ok := rerror.As(err)
	switch {
	case ok && e.Stalling:
		MarkStalled(obj, e.Reason, e.Error())
		return true
	case ok && e.Waiting:
		MarkReconciling(obj, e.Reason, e.Error())
		return false
	}
	reason := magosv1.ProgressingWithRetryReason
	if ok {
		reason = e.Reason
	}
	MarkRetrying(obj, reason, err.Error())
	return false
}

// MarkRetrying records a failure that is retried automatically:
// Reconciling True with reason ProgressingWithRetry, Ready False with the
// failure's own reason, Stalled removed. kstatus reads it as InProgress, so
// a failing object never looks done to kubectl wait or a Flux health check.
func MarkRetrying(obj Setter, reason, message string) {
	MarkReconciling(obj, magosv1.ProgressingWithRetryReason, message)
	Set(obj, magosv1.ReadyCondition, metav1.ConditionFalse, reason, message)
}
