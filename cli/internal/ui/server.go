package ui

import (
	"bytes"
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/view"
)

//go:embed files
var files embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"short": view.ShortRevision, "orNone": view.OrNone,
	"planLine": view.PlanLineClass,
}).ParseFS(files, "files/*.html"))

// Config is what the UI acts with and on.
type Config struct {
	// Client reads, watches and writes with the user's credentials.
	Client client.WithWatch
	// Logs reads runs' output from their Pods.
	Logs kubernetes.Interface
	// Namespace is the namespace the UI serves, "" for all of them.
	Namespace string
	// DefaultNamespace is the namespace of an action or page that names
	// none: the kubeconfig's.
	DefaultNamespace func() (string, error)
}

// Server serves one run of `kubectl magos ui`.
type Server struct {
	cfg     Config
	now     func() time.Time
	addr    string       // the host:port it listens on, the only Host it answers
	origin  string       // "http://" + addr
	cookie  string       // the session cookie's name, cookieName(addr)
	session string       // the session cookie's value
	code    *oneTimeCode // the printed URL's code, exchanged once for the session
	csrf    string
}

// New is the UI of one run listening on addr (host:port), and the URL
// that opens it: it carries a code that is exchanged once, within
// codeLifetime, for the session cookie.
func New(cfg Config, addr string, now func() time.Time) (*Server, string) {
	s := &Server{
		cfg: cfg, now: now,
		addr: addr, origin: "http://" + addr, cookie: cookieName(addr),
		session: randomToken(), csrf: randomToken(),
		code: &oneTimeCode{value: randomToken(), expires: now().Add(codeLifetime)},
	}
	return s, s.origin + "/?code=" + url.QueryEscape(s.code.value)
}

// Origin is where the UI answers: "http://" and its host:port.
func (s *Server) Origin() string { return s.origin }

// Serve serves the UI on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// randomToken is 32 random bytes, hex.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(files, "files")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.overview)
	mux.HandleFunc("GET /workspaces/{ns}/{name}", s.workspacePage)
	mux.HandleFunc("GET /workspaces/{ns}/{name}/logs", s.runLogs)
	mux.HandleFunc("GET /rollouts/{ns}/{name}", s.rolloutPage)
	mux.HandleFunc("GET /events", s.events)
	mux.HandleFunc("POST /act", s.act)
	return s.guard(mux)
}

func (s *Server) render(w http.ResponseWriter, name, title string, data any, err error) {
	p := view.Page{Title: title, CSRF: s.csrf, Namespace: view.OrNone(s.cfg.Namespace), Data: data}
	if err != nil {
		p.Error = err.Error()
	}
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, name, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// target is the object name of namespace ns (the default namespace for
// ""), through the UI's client.
func (s *Server) target(ns, name string) (*ops.Target, error) {
	if ns == "" && s.cfg.DefaultNamespace != nil {
		var err error
		if ns, err = s.cfg.DefaultNamespace(); err != nil {
			return nil, err
		}
	}
	return ops.NewTarget(s.cfg.Client, ns, name), nil
}

// list lists l in the namespace the UI serves.
func (s *Server) list(ctx context.Context, l client.ObjectList) error {
	var opts []client.ListOption
	if s.cfg.Namespace != "" {
		opts = append(opts, client.InNamespace(s.cfg.Namespace))
	}
	return s.cfg.Client.List(ctx, l, opts...)
}
