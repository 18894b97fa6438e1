package ui

import (
	"crypto/subtle"
	"net"
	"net/http"
	"sync"
	"time"
)

// The UI's session. Browsers send a host's cookies to all of its ports, and
// SameSite counts every port of 127.0.0.1 as the same site, so the
// session is bound to the UI's own host:port by the server: a request with
// another Host header is refused, the cookie is named for the port, and
// its value is never in a URL. The URL printed carries a code instead,
// exchanged once, within codeLifetime, for the cookie.

// codeLifetime is how long the printed URL's code can be exchanged.
const codeLifetime = 5 * time.Minute

// oneTimeCode is the printed URL's code.
type oneTimeCode struct {
	mu      sync.Mutex
	value   string
	expires time.Time
	used    bool
}

// redeem reports whether code is this run's code, not used yet and not
// expired at now, and uses it up if so.
func (c *oneTimeCode) redeem(code string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !codeRedeemable(code, c.value, c.used, c.expires, now) {
		return false
	}
	c.used = true
	return true
}

// codeRedeemable is whether a code given in a URL opens a session: the
// run's own code, never used, before it expires.
func codeRedeemable(given, want string, used bool, expires, now time.Time) bool {
	return !used && now.Before(expires) && equal(given, want)
}

// ownHost reports whether a request's Host header names exactly the
// host:port the UI listens on: not another port, not a name (a DNS name
// rebound to 127.0.0.1, or localhost for 127.0.0.1, whose cookies are
// another host's).
func ownHost(host, addr string) bool {
	return host != "" && host == addr
}

// cookieName is the session cookie's name for a UI listening on addr:
// one per port, so that UIs on other ports of the host neither read nor
// replace it.
func cookieName(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		port = "0"
	}
	return "magos_ui_" + port
}

// authorized reports whether r carries the run's session cookie.
func (s *Server) authorized(r *http.Request) bool {
	c, err := r.Cookie(s.cookie)
	return err == nil && equal(c.Value, s.session)
}

// sameOrigin reports whether a write comes from the UI's own pages: its
// CSRF header, and Origin and Sec-Fetch-Site when the browser sends them.
func (s *Server) sameOrigin(r *http.Request) bool {
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
func (s *Server) guard(next http.Handler) http.Handler {
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
