package workspace

import (
	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/metrics"
)

// trackSeries sets the per-object series of ws (magos_resource_info and
// the per-Workspace ones) from its status as written.
func trackSeries(ws *magosv1.Workspace) {
	info := metrics.ResourceInfo{Suspended: ws.Spec.Suspend, Phase: string(ws.Status.Phase)}
	if a := ws.Status.LastApplied; a != nil {
		info.Revision = a.Revision
	}
	metrics.TrackResource(magosv1.WorkspaceKind, ws, info)
	metrics.TrackWorkspaceState(ws.Namespace, ws.Name, workspaceState(ws))
}

// forgetSeries deletes the per-object series of a Workspace that is gone.
func forgetSeries(namespace, name string) {
	metrics.ForgetResource(magosv1.WorkspaceKind, namespace, name)
	metrics.TrackWorkspaceState(namespace, name, metrics.WorkspaceState{})
}

// workspaceState is what the per-Workspace series say of ws: drifted,
// whether a run that is gone holds its state lock, when it last applied,
// and since when its plan waits for approval or promotion (since the plan
// was made).
func workspaceState(ws *magosv1.Workspace) metrics.WorkspaceState {
	s := metrics.WorkspaceState{
		Drifted:  conditions.IsTrue(ws, magosv1.DriftedCondition),
		LockHeld: ws.Status.Lock != nil,
	}
	if a := ws.Status.LastApplied; a != nil {
		s.LastApplied = a.Time.Time
	}
	switch ws.Status.Phase {
	case magosv1.PhaseAwaitingApproval, magosv1.PhaseAwaitingPromotion:
		if p := ws.Status.Plan; p != nil && p.Time != nil {
			s.Awaiting, s.AwaitingSince = string(ws.Status.Phase), p.Time.Time
		}
	}
	return s
}
