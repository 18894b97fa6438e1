package workspace

import (
	"context"

	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/notify"
	"github.com/magos-dev/magos/controllers/internal/reconciletail"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
)

// reports is what one reconcile reports once the status that explains it
// is written (reconciletail.Finish): its events, buffered, and its run
// metrics. A reconcile whose status patch fails drops them, and its retry
// reports them again, so nothing is reported twice or ahead of the status.
type reports struct {
	events  reconciletail.EventBuffer
	metrics []func()
	// recorder is the manager's recorder, for events of a write that is
	// not the status patch (a finalizer removal that deletes the object).
	recorder events.EventRecorder
	// policies is the policy selection this reconcile read (selectPolicies),
	// which the fast path's deciders and the gate share; nil until read.
	policies *policySelection
}

// forReconcile is the copy of r that one reconcile works with: its events
// and run metrics wait for the status patch.
func (r *Reconciler) forReconcile() *Reconciler {
	rr := *r
	rr.reports = &reports{recorder: r.Events}
	if r.Events != nil {
		rr.Events = &rr.reports.events
	}
	return &rr
}

// afterPatch reports the run metrics recorded during the reconcile.
func (p *reports) afterPatch() {
	for _, fn := range p.metrics {
		fn()
	}
}

// notes records the events a pure fold returned, in order.
func (r *Reconciler) notes(ws *magosv1.Workspace, notes []decide.Note) {
	r.notesAbout(ws, eventMetadata(ws), notes)
}

// notesAbout is notes with the run or plan they are about named by
// metadata (eventMetadata of the status before the fold changed it).
func (r *Reconciler) notesAbout(ws *magosv1.Workspace, metadata map[string]string, notes []decide.Note) {
	for _, n := range notes {
		notify.Eventf(r.Events, ws, nil, metadata, n.Type, n.Reason, n.Reason, "%s", n.Message)
	}
}

// eventMetadata names the run or plan an event on ws is about: the current
// run's (the run starting or whose result is being recorded), else the
// plan's in status; the revision falls back to the source's.
func eventMetadata(ws *magosv1.Workspace) map[string]string {
	var revision, planID string
	switch st := &ws.Status; {
	case st.CurrentRun != nil:
		revision, planID = st.CurrentRun.Revision, st.CurrentRun.PlanID
	case st.Plan != nil:
		revision, planID = st.Plan.Revision, st.Plan.ID
	}
	if revision == "" && ws.Status.Source != nil {
		revision = ws.Status.Source.Revision
	}
	return notify.Meta(notify.RevisionKey, revision, notify.PlanIDKey, planID)
}

// reportNow reports what this reconcile recorded so far, at once: after a
// write other than the status patch that deletes the object.
func (r *Reconciler) reportNow() {
	if r.reports == nil {
		return
	}
	r.reports.events.Flush(r.reports.recorder)
	r.reports.afterPatch()
	r.reports.metrics = nil
}

// later reports fn once the status is written (at once outside a
// reconcile).
func (r *Reconciler) later(fn func()) {
	if r.reports == nil {
		fn()
		return
	}
	r.reports.metrics = append(r.reports.metrics, fn)
}

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
