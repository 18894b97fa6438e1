package ui

import (
	"io"
	"net/http"
	"strconv"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/view"
)

// overview lists the Projects, Rollouts, Workspaces and WorkspaceSets in
// scope.
func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var wss magosv1.WorkspaceList
	var ros magosv1.RolloutList
	var projects magosv1.ProjectList
	var sets magosv1.WorkspaceSetList
	err := s.list(ctx, &wss)
	if err == nil {
		err = s.list(ctx, &ros)
	}
	if err == nil {
		err = s.list(ctx, &projects)
	}
	if err == nil {
		_ = s.list(ctx, &sets) // optional: a cluster without the kind still shows the rest
	}
	s.render(w, "overview.html", "Magos", view.OverviewOf(wss.Items, ros.Items, projects.Items, sets.Items, time.Now()), err)
}

// workspacePage shows a Workspace: its plan as plan show renders it, its
// runs, outputs and events.
func (s *Server) workspacePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ns, name := r.PathValue("ns"), r.PathValue("name")
	t, err := s.target(ns, name)
	var ws *magosv1.Workspace
	if err == nil {
		ws, err = t.ReadWorkspace(ctx)
	}
	if err != nil {
		s.render(w, "workspace.html", name, view.WorkspacePage{WS: &magosv1.Workspace{}}, err)
		return
	}
	var shown view.Readable
	var planErr error
	if p := ws.Status.Plan; p != nil {
		shown, planErr = ops.ReadablePlan(ctx, t.PlanGetter(), name, p, ops.SecretVariables(ctx, t.Client, ws))
	}
	var evs eventsv1.EventList
	if err := s.cfg.Client.List(ctx, &evs, client.InNamespace(ns)); err != nil {
		evs.Items = nil
	}
	s.render(w, "workspace.html", "Workspace "+name, view.WorkspacePageOf(ws, shown, planErr, evs.Items), nil)
}

// runLogs is the output of run ?run=N of status.history (the runner masks
// secrets in it), as kubectl magos logs --run N prints it.
func (s *Server) runLogs(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("run"))
	if err != nil {
		http.Error(w, "run must be an index of status.history", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	t, err := s.target(r.PathValue("ns"), r.PathValue("name"))
	var stream io.ReadCloser
	if err == nil {
		stream, err = ops.RunLogs(r.Context(), t, s.cfg.Logs, n, true, false)
	}
	if err == nil {
		defer stream.Close()
		_, err = io.Copy(w, stream)
	}
	if err != nil {
		_, _ = w.Write([]byte("\n" + err.Error() + "\n"))
	}
}

// rolloutPage shows a Rollout and its stages.
func (s *Server) rolloutPage(w http.ResponseWriter, r *http.Request) {
	ro := &magosv1.Rollout{}
	err := s.cfg.Client.Get(r.Context(), client.ObjectKey{Namespace: r.PathValue("ns"), Name: r.PathValue("name")}, ro)
	s.render(w, "rollout.html", "Rollout "+r.PathValue("name"), view.RolloutPageOf(ro), err)
}
