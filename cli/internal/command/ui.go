package command

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"
)

// The local UI: `kubectl magos ui` serves pages and actions on the user's
// own machine, acting with the user's own kubeconfig, so the apiserver's
// RBAC decides everything; nothing is installed in the cluster.
//
// It listens on loopback only (another address needs --allow-remote). A
// random token, given once in the URL, is exchanged for a cookie
// (HttpOnly, SameSite=Strict); every request needs it. Every write is a
// POST that must carry the page's CSRF token in a header and come from the
// UI's own origin (Origin and Sec-Fetch-Site checked).

type uiOptions struct {
	address     string
	port        int
	noBrowser   bool
	allNS       bool
	allowRemote bool
}

func newUICommand(f *factory) *cobra.Command {
	o := &uiOptions{}
	cmd := &cobra.Command{
		Use:   "ui [--port N] [--no-browser] [-n NS | -A]",
		Short: "Serve a local web UI for plans, approvals and Rollouts, with your own credentials",
		Long: `Serve a web UI on 127.0.0.1 that reads and acts with your kubeconfig's
credentials: the apiserver's RBAC decides what you see and may do, as with
kubectl. Open the URL it prints (it carries a token for this run only);
--no-browser does not open it for you.

Pages: an overview of Projects, Rollouts and Workspaces; each Workspace's
plan, policy verdict, run history, outputs (names only) and events; each
Rollout's stages. Actions: approve a named plan, promote a stage, replan,
retry, unlock, suspend and resume, through the same code as the commands.
Pages follow changes as they happen (server-sent events).

Only loopback addresses are served; --address with another one also needs
--allow-remote, which exposes your credentials to whoever reaches the port
and holds the token: do not.`,
		Example: `  kubectl magos ui                 # opens the browser
  kubectl magos ui -A --no-browser # every namespace; print the URL only`,
		Args: args(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), f) },
	}
	cmd.Flags().StringVar(&o.address, "address", "127.0.0.1", "the address to listen on: loopback only, unless --allow-remote")
	cmd.Flags().IntVar(&o.port, "port", 0, "the port (0: any free one)")
	cmd.Flags().BoolVar(&o.noBrowser, "no-browser", false, "print the URL without opening a browser")
	cmd.Flags().BoolVarP(&o.allNS, "all-namespaces", "A", false, "show every namespace you may read")
	cmd.Flags().BoolVar(&o.allowRemote, "allow-remote", false, "allow a non-loopback --address (dangerous: see above)")
	return cmd
}

func (o *uiOptions) run(ctx context.Context, f *factory) error {
	ip := net.ParseIP(o.address)
	if o.address == "localhost" {
		ip = net.IPv4(127, 0, 0, 1)
	}
	if ip == nil {
		return usageError("--address %q is not an IP address", o.address)
	}
	if !ip.IsLoopback() && !o.allowRemote {
		return usageError("--address %s is not a loopback address: the UI acts with your credentials; add --allow-remote only if you know who can reach it", o.address)
	}
	c, err := f.client()
	if err != nil {
		return err
	}
	ns := ""
	if !o.allNS {
		if ns, err = f.namespace(); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), fmt.Sprint(o.port)))
	if err != nil {
		return err
	}
	s := &uiServer{f: f, c: c, namespace: ns, token: randomToken(), csrf: randomToken(), origin: "http://" + ln.Addr().String()}
	link := s.origin + "/?token=" + url.QueryEscape(s.token)
	fmt.Fprintf(f.streams.Out, "Magos UI on %s (Ctrl-C stops it)\n%s\n", s.origin, link)
	if !o.noBrowser {
		openBrowser(link)
	}
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

// openBrowser opens url in the user's browser, if one can be found.
func openBrowser(url string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	_ = cmd.Start()
}

// cookieName holds the token once exchanged.
const cookieName = "magos_ui"

// authorized reports whether r carries the run's token, as the cookie or
// (the first visit) the token parameter.
func (s *uiServer) authorized(r *http.Request) bool {
	if c, err := r.Cookie(cookieName); err == nil && equal(c.Value, s.token) {
		return true
	}
	return equal(r.URL.Query().Get("token"), s.token)
}

// sameOrigin reports whether a write comes from the UI's own pages: its
// CSRF header, and Origin and Sec-Fetch-Site when the browser sends them.
func (s *uiServer) sameOrigin(r *http.Request) bool {
	if !equal(r.Header.Get("X-Magos-CSRF"), s.csrf) {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" && o != s.origin {
		return false
	}
	site := r.Header.Get("Sec-Fetch-Site")
	return site == "" || site == "same-origin"
}

func equal(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// guard lets only authorized requests through; a token given in the URL
// becomes the cookie, and the page is loaded again without it.
func (s *uiServer) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
		w.Header().Set("Referrer-Policy", "no-referrer")
		if !s.authorized(r) {
			http.Error(w, "forbidden: open the URL kubectl magos ui printed (it carries this run's token)", http.StatusForbidden)
			return
		}
		if r.URL.Query().Has("token") {
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			clean := *r.URL
			q := clean.Query()
			q.Del("token")
			clean.RawQuery = q.Encode()
			http.Redirect(w, r, clean.String(), http.StatusSeeOther)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !s.sameOrigin(r) {
			http.Error(w, "forbidden: a write must come from the UI's own pages", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
