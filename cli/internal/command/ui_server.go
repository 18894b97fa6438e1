package command

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"html/template"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

//go:embed ui
var uiFiles embed.FS

var uiTemplates = template.Must(template.New("").Funcs(template.FuncMap{
	"short": shortRevision, "orNone": orNone,
	"planLine": planLineClass,
}).ParseFS(uiFiles, "ui/*.html"))

// uiServer serves one run of `kubectl magos ui`.
type uiServer struct {
	f         *factory
	c         client.WithWatch
	namespace string // "" for all namespaces
	now       func() time.Time
	addr      string  // the host:port it listens on, the only Host it answers
	origin    string  // "http://" + addr
	cookie    string  // the session cookie's name, uiCookieName(addr)
	session   string  // the session cookie's value
	code      *uiCode // the printed URL's code, exchanged once for the session
	csrf      string
}

func (s *uiServer) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(uiFiles, "ui")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.overview)
	mux.HandleFunc("GET /workspaces/{ns}/{name}", s.workspacePage)
	mux.HandleFunc("GET /workspaces/{ns}/{name}/logs", s.runLogs)
	mux.HandleFunc("GET /rollouts/{ns}/{name}", s.rolloutPage)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("POST /act", s.act)
	return s.guard(mux)
}

// page is what every template gets.
type page struct {
	Title, CSRF, Namespace string
	Error                  string
	Data                   any
}

func (s *uiServer) render(w http.ResponseWriter, name, title string, data any, err error) {
	p := page{Title: title, CSRF: s.csrf, Namespace: orNone(s.namespace), Data: data}
	if err != nil {
		p.Error = err.Error()
	}
	var b bytes.Buffer
	if err := uiTemplates.ExecuteTemplate(&b, name, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// htmlTable is rows of cells under headers, the second cell (the name) a link.
type htmlTable struct {
	Headers []string
	Rows    []row
}

type row struct {
	Link  string
	Cells []string
}

type overviewData struct {
	Projects, Rollouts, Workspaces, Sets htmlTable
}

func (s *uiServer) list(ctx context.Context, l client.ObjectList) error {
	var opts []client.ListOption
	if s.namespace != "" {
		opts = append(opts, client.InNamespace(s.namespace))
	}
	return s.c.List(ctx, l, opts...)
}

func (s *uiServer) overview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	var d overviewData
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
	now := time.Now()
	d.Workspaces.Headers = append([]string{"NAMESPACE"}, workspaceHeaders...)
	for i := range wss.Items {
		ws := &wss.Items[i]
		d.Workspaces.Rows = append(d.Workspaces.Rows, row{Link: "/workspaces/" + ws.Namespace + "/" + ws.Name,
			Cells: append([]string{ws.Namespace}, workspaceRow(ws, now)...)})
	}
	d.Rollouts.Headers = append([]string{"NAMESPACE"}, rolloutHeaders...)
	for i := range ros.Items {
		ro := &ros.Items[i]
		d.Rollouts.Rows = append(d.Rollouts.Rows, row{Link: "/rollouts/" + ro.Namespace + "/" + ro.Name,
			Cells: append([]string{ro.Namespace}, rolloutRow(ro)...)})
	}
	d.Projects.Headers = append([]string{"NAMESPACE"}, projectHeaders...)
	for i := range projects.Items {
		p := &projects.Items[i]
		d.Projects.Rows = append(d.Projects.Rows, row{Cells: append([]string{p.Namespace}, projectRow(p)...)})
	}
	d.Sets.Headers = append([]string{"NAMESPACE"}, workspaceSetHeaders...)
	for i := range sets.Items {
		set := &sets.Items[i]
		d.Sets.Rows = append(d.Sets.Rows, row{Cells: append([]string{set.Namespace}, workspaceSetRow(set)...)})
	}
	s.render(w, "overview.html", "Magos", d, err)
}

// workspaceData is a Workspace's page.
type workspaceData struct {
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

func (s *uiServer) workspacePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ns, name := r.PathValue("ns"), r.PathValue("name")
	fx := s.f.in(ns, &bytes.Buffer{})
	t, ws, err := readWorkspace(ctx, fx, name)
	if err != nil {
		s.render(w, "workspace.html", name, workspaceData{WS: &magosv1.Workspace{}}, err)
		return
	}
	d := workspaceData{WS: ws, Ready: readyMessage(ws.Status.Conditions), Awaiting: ws.Status.Phase == magosv1.PhaseAwaitingApproval}
	if p := ws.Status.Plan; p != nil {
		shown, err := readablePlan(ctx, t.planGetter(), name, p, secretVariables(ctx, t.c, ws))
		if err != nil {
			d.PlanError = err.Error()
		} else {
			d.Plan = strings.Split(strings.TrimRight(shown.Text, "\n"), "\n")
			d.PlanVerified, d.PlanSource = shown.Verified, shown.Source
		}
	}
	var evs eventsv1.EventList
	if err := s.c.List(ctx, &evs, client.InNamespace(ns)); err == nil {
		for _, e := range evs.Items {
			if e.Regarding.Kind == magosv1.WorkspaceKind && e.Regarding.Name == name {
				d.Events = append(d.Events, e)
			}
		}
		slices.SortFunc(d.Events, func(a, b eventsv1.Event) int { return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
		d.Events = d.Events[:min(len(d.Events), 20)]
	}
	s.render(w, "workspace.html", "Workspace "+name, d, nil)
}

// runLogs is the output of run ?run=N of status.history (the runner masks
// secrets in it), as kubectl magos logs --run N prints it.
func (s *uiServer) runLogs(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("run"))
	if err != nil {
		http.Error(w, "run must be an index of status.history", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if err := (&logsOptions{run: n}).show(r.Context(), s.f.in(r.PathValue("ns"), w), r.PathValue("name"), true); err != nil {
		_, _ = w.Write([]byte("\n" + err.Error() + "\n"))
	}
}

// planLineClass colours a line of the readable plan as the engine does.
func planLineClass(line string) string {
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

type rolloutData struct {
	RO    *magosv1.Rollout
	Ready string
}

func (s *uiServer) rolloutPage(w http.ResponseWriter, r *http.Request) {
	ro := &magosv1.Rollout{}
	err := s.c.Get(r.Context(), client.ObjectKey{Namespace: r.PathValue("ns"), Name: r.PathValue("name")}, ro)
	s.render(w, "rollout.html", "Rollout "+r.PathValue("name"), rolloutData{RO: ro, Ready: readyMessage(ro.Status.Conditions)}, err)
}

// actResult answers an action.
type actResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// act runs one action through the code of the command that does it, in
// the namespace of the object, with the user's credentials: a refusal
// from the apiserver (RBAC, a stale plan ID) comes back as the message.
func (s *uiServer) act(w http.ResponseWriter, r *http.Request) {
	var in struct{ Action, Namespace, Name, Plan, Stage, Revision string }
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, actResult{Message: "bad request: " + err.Error()})
		return
	}
	if s.namespace != "" && in.Namespace != s.namespace {
		writeJSON(w, http.StatusForbidden, actResult{Message: "this UI serves namespace " + s.namespace})
		return
	}
	var out bytes.Buffer
	fx := s.f.in(in.Namespace, &out)
	ctx := r.Context()
	var err error
	switch in.Action {
	case "approve":
		_, err = approveOne(ctx, fx, in.Name, planRef{ID: in.Plan})
	case "promote":
		err = promote(ctx, fx, in.Name, in.Stage, in.Revision)
	case "replan":
		err = (&requestOptions{}).run(ctx, fx, in.Name, nil)
	case "retry":
		err = (&requestOptions{}).run(ctx, fx, in.Name, retryable)
	case "unlock":
		err = unlock(ctx, fx, in.Name, true)
	case "suspend", "resume":
		kind := "workspace"
		if in.Stage == "rollout" {
			kind = "rollout"
		}
		err = setSuspend(ctx, fx, kind, in.Name, in.Action == "suspend")
	default:
		writeJSON(w, http.StatusBadRequest, actResult{Message: "unknown action " + in.Action})
		return
	}
	if err != nil {
		writeJSON(w, http.StatusOK, actResult{Message: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, actResult{OK: true, Message: strings.TrimSpace(out.String())})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// events streams "changed" whenever a Workspace, Rollout or Project in
// scope changes, at most every 250 ms, for pages to refresh.
func (s *uiServer) events(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	changed := make(chan struct{}, 1)
	var opts []client.ListOption
	if s.namespace != "" {
		opts = append(opts, client.InNamespace(s.namespace))
	}
	for _, l := range []client.ObjectList{&magosv1.WorkspaceList{}, &magosv1.RolloutList{}, &magosv1.ProjectList{}} {
		wi, err := s.c.Watch(ctx, l, opts...)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer wi.Stop()
		go func() {
			for range wi.ResultChan() {
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(": connected\n\n"))
	flusher.Flush()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	pending := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
			pending = true
		case <-tick.C:
			if pending {
				pending = false
				_, _ = w.Write([]byte("data: changed\n\n"))
				flusher.Flush()
			}
		}
	}
}
