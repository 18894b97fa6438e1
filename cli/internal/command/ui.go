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
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The local UI: `kubectl magos ui` serves pages and actions on the user's
// own machine, acting with the user's own kubeconfig, so the apiserver's
// RBAC decides everything; nothing is installed in the cluster.
//
// It listens on loopback only (another address needs --allow-remote) and
// answers only requests for its own host:port. The URL it prints carries
// a random code, exchanged once and within minutes for a session cookie
// (HttpOnly, SameSite=Strict, named for the port); every request needs
// the cookie, and the session never appears in a URL. Every write is a
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
kubectl. Open the URL it prints: its code opens a session once, within 5
minutes; --no-browser does not open it for you.

Pages: an overview of Projects, Rollouts and Workspaces; each Workspace's
plan, policy verdict, run history, outputs (names only) and events; each
Rollout's stages. Actions: approve a named plan, promote a stage, replan,
retry, unlock, suspend and resume, through the same code as the commands.
Pages follow changes as they happen (server-sent events).

Only loopback addresses are served; --address with another one also needs
--allow-remote, which exposes your credentials to whoever reaches the port
and holds the session: do not.`,
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
	s, link := newUIServer(f, c, ns, ln.Addr().String(), time.Now)
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

// newUIServer is the UI of one run listening on addr (host:port), and the
// URL that opens it: it carries a code that is exchanged once, within
// uiCodeLifetime, for the session cookie.
func newUIServer(f *factory, c client.WithWatch, namespace, addr string, now func() time.Time) (*uiServer, string) {
	s := &uiServer{
		f: f, c: c, namespace: namespace, now: now,
		addr: addr, origin: "http://" + addr, cookie: uiCookieName(addr),
		session: randomToken(), csrf: randomToken(),
		code: &uiCode{value: randomToken(), expires: now().Add(uiCodeLifetime)},
	}
	return s, s.origin + "/?code=" + url.QueryEscape(s.code.value)
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

// guard lets only requests to the UI's own host:port with the run's
// session through; the code of the printed URL becomes the session
// cookie, and the page is loaded again without it.
func (s *uiServer) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-store")
		if !ownHost(r.Host, s.addr) {
			http.Error(w, "forbidden: this UI answers only at "+s.origin, http.StatusForbidden)
			return
		}
		if q := r.URL.Query(); q.Has("code") {
			switch {
			case s.code.redeem(q.Get("code"), s.now()):
				http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			case !s.authorized(r):
				http.Error(w, "forbidden: this URL's code was used or has expired: run kubectl magos ui again", http.StatusForbidden)
				return
			}
			clean := *r.URL
			q.Del("code")
			clean.RawQuery = q.Encode()
			http.Redirect(w, r, clean.RequestURI(), http.StatusSeeOther)
			return
		}
		if !s.authorized(r) {
			http.Error(w, "forbidden: open the URL kubectl magos ui printed", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !s.sameOrigin(r) {
			http.Error(w, "forbidden: a write must come from the UI's own pages", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
