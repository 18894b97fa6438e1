package progress

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// Member is what a Rollout reads of one Workspace's status.
type Member struct {
	Name            string
	AppliedRevision string
	AppliedAt       *metav1.Time
	Ready           bool
	Phase           magosv1.WorkspacePhase
	// Failing is set when the Workspace failed on the revision being rolled
	// out (a failed run, a policy verdict, a stalled reconcile); Message
	// says why.
	Failing bool
	Message string
}

// done reports whether the member applied revision and is Ready.
func (m Member) done(revision string) bool {
	return m.AppliedRevision == revision && m.Ready
}

// MemberOf reads ws as a member rolling out revision.
func MemberOf(ws *magosv1.Workspace, revision string) Member {
	m := Member{Name: ws.Name, Phase: ws.Status.Phase}
	if a := ws.Status.LastApplied; a != nil {
		m.AppliedRevision, m.AppliedAt = a.Revision, a.Time.DeepCopy()
	}
	ready := conditions.Get(ws, magosv1.ReadyCondition)
	m.Ready = ready != nil && ready.Status == metav1.ConditionTrue && ws.Status.ObservedGeneration == ws.Generation
	if revision == "" || m.done(revision) {
		return m
	}
	// A stalled Workspace needs a person whatever it was doing; a failed
	// run or policy verdict counts when it was about this revision.
	if stalled := conditions.Get(ws, magosv1.StalledCondition); stalled != nil && stalled.Status == metav1.ConditionTrue {
		m.Failing, m.Message = true, stalled.Reason+": "+stalled.Message
	} else if ws.Status.Phase == magosv1.PhaseFailed && ready != nil && workingOn(ws, revision) {
		m.Failing, m.Message = true, ready.Reason+": "+ready.Message
	}
	return m
}

// workingOn reports whether ws's current plan or newest run is for revision.
func workingOn(ws *magosv1.Workspace, revision string) bool {
	st := ws.Status
	if st.Plan != nil && st.Plan.Revision == revision {
		return true
	}
	last := st.LastRun()
	return last != nil && last.Revision == revision
}
