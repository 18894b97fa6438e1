package workspace

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/metrics"
)

// workspaceSeries lists the Workspaces of the cache r as the series a
// scrape exports (magos_resource_info and the per-Workspace ones). The
// cache's objects are read, not copied: nothing here writes to them.
func workspaceSeries(ctx context.Context, r client.Reader) ([]metrics.ObjectSeries, error) {
	var list magosv1.WorkspaceList
	if err := r.List(ctx, &list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	out := make([]metrics.ObjectSeries, 0, len(list.Items))
	for i := range list.Items {
		ws := &list.Items[i]
		info := metrics.ResourceInfo{Suspended: ws.Spec.Suspend, Phase: string(ws.Status.Phase)}
		if a := ws.Status.LastApplied; a != nil {
			info.Revision = a.Revision
		}
		state := workspaceState(ws)
		out = append(out, metrics.ObjectSeries{Kind: magosv1.WorkspaceKind, Namespace: ws.Namespace, Name: ws.Name,
			Conditions: ws.Status.Conditions, Info: info, Workspace: &state})
	}
	return out, nil
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
