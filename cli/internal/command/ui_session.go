package command

import (
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
// exchanged once, within uiCodeLifetime, for the cookie.

// uiCodeLifetime is how long the printed URL's code can be exchanged.
const uiCodeLifetime = 5 * time.Minute

// uiCode is the printed URL's code.
type uiCode struct {
	mu      sync.Mutex
	value   string
	expires time.Time
	used    bool
}

// redeem reports whether code is this run's code, not used yet and not
// expired at now, and uses it up if so.
func (c *uiCode) redeem(code string, now time.Time) bool {
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

// uiCookieName is the session cookie's name for a UI listening on addr:
// one per port, so that UIs on other ports of the host neither read nor
// replace it.
func uiCookieName(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		port = "0"
	}
	return "magos_ui_" + port
}

// authorized reports whether r carries the run's session cookie.
func (s *uiServer) authorized(r *http.Request) bool {
	c, err := r.Cookie(s.cookie)
	return err == nil && equal(c.Value, s.session)
}
