package variableset

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// maxListedMissing bounds how many missing references the Ready message names.
const maxListedMissing = 5

// observation is what one reconcile of a VariableSet saw.
type observation struct {
	// Rendered is set when every referenced object could be observed.
	Rendered *rendered
	// Err is the reconcile error, if any.
	Err error
}

// computeStatus sets the rendered fields, conditions and observedGeneration
// of vs from the observation. It is pure.
//
//   - Every reference present (optional ones may be missing): Ready=True,
//     reason Succeeded.
//   - A required reference missing: Ready=False and Reconciling=True with
//     reason ReferenceNotFound and a message naming what is missing. This is
//     a wait, not a failure: the reconcile succeeded in observing a
//     not-ready state, so observedGeneration moves and the rendered fields
//     are written (the workspace-controller uses them only when Ready).
//   - An error reading references: Ready=False with the error's reason,
//     Reconciling=True (ProgressingWithRetry); the rendered fields keep
//     their last values.
//
// observedGeneration moves whenever the conditions were computed, errors
// included, so kstatus reads the conditions rather than a stale
// generation.
func computeStatus(vs *magosv1.VariableSet, o observation) {
	if o.Err != nil {
		conditions.MarkError(vs, o.Err)
		vs.Status.ObservedGeneration = vs.Generation
		return
	}
	r := o.Rendered
	if r == nil {
		// Nothing was observed (the VariableSet is being deleted).
		return
	}
	st := &vs.Status
	st.Env = r.Env
	st.SensitiveEnv = r.Sensitive
	st.References = r.References
	st.InputsDigest = r.Digest
	if len(r.Missing) > 0 {
		conditions.MarkReconciling(vs, magosv1.ReasonReferenceNotFound, missingMessage(r.Missing))
	} else {
		conditions.MarkReady(vs, metav1.ConditionTrue, magosv1.ReconciliationSucceededReason, readyMessage(r))
	}
	st.ObservedGeneration = vs.Generation
}

func missingMessage(missing []string) string {
	shown := missing[:min(len(missing), maxListedMissing)]
	msg := "Waiting for " + strings.Join(shown, "; ")
	if more := len(missing) - len(shown); more > 0 {
		msg += fmt.Sprintf("; and %d more (see status.references)", more)
	}
	return msg
}

func readyMessage(r *rendered) string {
	msg := fmt.Sprintf("Rendered %d environment variables from %d references", len(r.Env), len(r.References))
	if r.OptionalMissing > 0 {
		msg += fmt.Sprintf("; %d optional references missing", r.OptionalMissing)
	}
	return msg
}
