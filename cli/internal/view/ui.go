package view

import (
	"slices"
	"strings"
	"time"

	eventsv1 "k8s.io/api/events/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// The view model of `kubectl magos ui`: what its templates are given.

// Page is what every template gets.
type Page struct {
	Title, CSRF, Namespace string
	Error                  string
	Data                   any
}

// Table is rows of cells under headers, the second cell (the name) a link.
type Table struct {
	Headers []string
	Rows    []Row
}

// Row is one row of a Table; Link, when set, is where its name leads.
type Row struct {
	Link  string
	Cells []string
}

// Overview is the overview page: the objects in scope, as tables with
// the columns of kubectl magos get and their namespace.
type Overview struct {
	Projects, Rollouts, Workspaces, Sets Table
}

// OverviewOf is the overview of the objects listed, ages relative to now.
func OverviewOf(wss []magosv1.Workspace, ros []magosv1.Rollout, projects []magosv1.Project, sets []magosv1.WorkspaceSet, now time.Time) Overview {
	var d Overview
	d.Workspaces.Headers = append([]string{"NAMESPACE"}, WorkspaceHeaders...)
	for i := range wss {
		ws := &wss[i]
		d.Workspaces.Rows = append(d.Workspaces.Rows, Row{Link: "/workspaces/" + ws.Namespace + "/" + ws.Name,
			Cells: append([]string{ws.Namespace}, WorkspaceRow(ws, now)...)})
	}
	d.Rollouts.Headers = append([]string{"NAMESPACE"}, RolloutHeaders...)
	for i := range ros {
		ro := &ros[i]
		d.Rollouts.Rows = append(d.Rollouts.Rows, Row{Link: "/rollouts/" + ro.Namespace + "/" + ro.Name,
			Cells: append([]string{ro.Namespace}, RolloutRow(ro)...)})
	}
	d.Projects.Headers = append([]string{"NAMESPACE"}, ProjectHeaders...)
	for i := range projects {
		p := &projects[i]
		d.Projects.Rows = append(d.Projects.Rows, Row{Cells: append([]string{p.Namespace}, ProjectRow(p)...)})
	}
	d.Sets.Headers = append([]string{"NAMESPACE"}, WorkspaceSetHeaders...)
	for i := range sets {
		set := &sets[i]
		d.Sets.Rows = append(d.Sets.Rows, Row{Cells: append([]string{set.Namespace}, WorkspaceSetRow(set)...)})
	}
	return d
}

// maxEvents is how many of a Workspace's events its page shows.
const maxEvents = 20

// WorkspacePage is a Workspace's page.
type WorkspacePage struct {
	WS    *magosv1.Workspace
	Ready string
	// Plan is the readable plan, one line an element; PlanVerified says
	// whether it was rendered from the digest-checked plan JSON and
	// PlanSource says where it comes from.
	Plan         []string
	PlanVerified bool
	PlanSource   string
	PlanError    string
	Events       []eventsv1.Event
	Awaiting     bool
}

// WorkspacePageOf is the page of ws: its plan as shown (or why it cannot
// be, planErr), and the newest of events that regard it.
func WorkspacePageOf(ws *magosv1.Workspace, shown Readable, planErr error, events []eventsv1.Event) WorkspacePage {
	d := WorkspacePage{WS: ws, Ready: ReadyMessage(ws.Status.Conditions), Awaiting: ws.Status.Phase == magosv1.PhaseAwaitingApproval}
	if ws.Status.Plan != nil {
		if planErr != nil {
			d.PlanError = planErr.Error()
		} else {
			d.Plan = strings.Split(strings.TrimRight(shown.Text, "\n"), "\n")
			d.PlanVerified, d.PlanSource = shown.Verified, shown.Source
		}
	}
	for _, e := range events {
		if e.Regarding.Kind == magosv1.WorkspaceKind && e.Regarding.Name == ws.Name {
			d.Events = append(d.Events, e)
		}
	}
	slices.SortFunc(d.Events, func(a, b eventsv1.Event) int { return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
	d.Events = d.Events[:min(len(d.Events), maxEvents)]
	return d
}

// RolloutPage is a Rollout's page.
type RolloutPage struct {
	RO    *magosv1.Rollout
	Ready string
}

// RolloutPageOf is the page of ro.
func RolloutPageOf(ro *magosv1.Rollout) RolloutPage {
	return RolloutPage{RO: ro, Ready: ReadyMessage(ro.Status.Conditions)}
}

// PlanLineClass colours a line of the readable plan as the engine does.
func PlanLineClass(line string) string {
	t := strings.TrimLeft(line, " ")
	switch {
	case strings.HasPrefix(t, "-/+"), strings.HasPrefix(t, "+/-"):
		return "replace"
	case strings.HasPrefix(t, "+"):
		return "add"
	case strings.HasPrefix(t, "-"):
		return "destroy"
	case strings.HasPrefix(t, "~"):
		return "change"
	case strings.HasPrefix(t, "Plan:"):
		return "summary"
	}
	return ""
}
