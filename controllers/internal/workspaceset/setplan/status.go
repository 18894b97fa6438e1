package setplan

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// Observation is what one reconcile saw and did.
type Observation struct {
	Elements, Owned, Ready, Deferred int
	// Refused counts the elements not applied (RenderAll).
	Refused int
}

// ComputeStatus sets the set's counts and conditions from what the
// reconcile saw and its error. It is pure.
//
//   - An error: Stalled for a generator, template, bound or conflict error
//     (nothing was changed, or for refused elements only the others were
//     applied), else retried (conditions.MarkError); the counts keep their
//     last values, but where elements were refused they count what the
//     reconcile did.
//   - Creates left for the next reconcile: Reconciling (Generating).
//   - Otherwise Ready: every element has its Workspace, up to date with
//     the template.
func ComputeStatus(set *magosv1.WorkspaceSet, o Observation, err error) {
	st := &set.Status
	st.ObservedGeneration = set.Generation
	if err != nil {
		if o.Refused > 0 {
			st.Elements, st.Workspaces, st.Ready = int32(o.Elements), int32(o.Owned), int32(o.Ready)
		}
		conditions.MarkError(set, err)
		return
	}
	if !set.DeletionTimestamp.IsZero() {
		return
	}
	st.Elements, st.Workspaces, st.Ready = int32(o.Elements), int32(o.Owned), int32(o.Ready)
	if o.Deferred > 0 {
		conditions.MarkReconciling(set, magosv1.ReasonGenerating, fmt.Sprintf(
			"%d of %d Workspaces generated; creating the rest, a few at a time", o.Owned, o.Elements))
		return
	}
	conditions.MarkReady(set, metav1.ConditionTrue, magosv1.ReasonGenerated, fmt.Sprintf(
		"%d Workspaces generated from %d elements, %d Ready", o.Owned, o.Elements, o.Ready))
}
