package ui

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// uiAnswer is what the UI answered one request.
type uiAnswer struct {
	StatusCode int
	Header     http.Header
	cookies    []*http.Cookie
}

func (a uiAnswer) Cookies() []*http.Cookie { return a.cookies }

// uiRequest sends one request through the UI's guard with the given Host
// header and cookies.
func uiRequest(h http.Handler, method, target, host string, cookies ...*http.Cookie) uiAnswer {
	r := httptest.NewRequest(method, target, nil)
	r.Host = host
	for _, c := range cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	resp := w.Result()
	defer resp.Body.Close()
	return uiAnswer{StatusCode: resp.StatusCode, Header: resp.Header, cookies: resp.Cookies()}
}

var uiOK = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("page")) })

// TestUISessionStartsWithAOneTimeCode: the URL kubectl magos ui prints
// carries a code, not the session: the first visit trades it for an
// HttpOnly, SameSite=Strict cookie named for the UI's port and is sent
// back to the page without it; the code works once, and not after it
// expired; what the URL carried is not the session.
func TestUISessionStartsWithAOneTimeCode(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }
	const addr = "127.0.0.1:4711"
	s, link := New(Config{}, addr, clock)
	h := s.guard(uiOK)
	u, err := url.Parse(link)
	require.NoError(t, err)
	assert.Equal(t, addr, u.Host)
	assert.False(t, u.Query().Has("token"), "the URL carries no session token: %s", link)
	code := u.Query().Get("code")
	require.NotEmpty(t, code, "the URL carries a one-time code: %s", link)

	resp := uiRequest(h, http.MethodGet, link, addr)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "the code is exchanged")
	assert.Equal(t, "/", resp.Header.Get("Location"), "the page is loaded again without the code")
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	session := cookies[0]
	assert.Equal(t, "magos_ui_4711", session.Name, "named for the port: a UI on another port neither reads nor replaces it")
	assert.True(t, session.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, session.SameSite)
	assert.Equal(t, "/", session.Path)
	assert.Empty(t, session.Domain, "host-only")
	assert.NotContains(t, link, session.Value, "the session never appears in a URL")
	assert.NotEqual(t, code, session.Value)

	resp = uiRequest(h, http.MethodGet, "/workspaces/a/b", addr, session)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the session opens pages")

	resp = uiRequest(h, http.MethodGet, link, addr)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the code works once")
	assert.Empty(t, resp.Cookies())
	resp = uiRequest(h, http.MethodGet, "/", addr, &http.Cookie{Name: session.Name, Value: code})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the code is not the session")
	resp = uiRequest(h, http.MethodGet, "/?token="+url.QueryEscape(session.Value), addr)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the session is not taken from a URL")
	resp = uiRequest(h, http.MethodGet, "/", addr, &http.Cookie{Name: "magos_ui", Value: session.Value})
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "only the cookie named for the port")

	late, lateLink := New(Config{}, addr, clock)
	now = now.Add(codeLifetime + time.Second)
	resp = uiRequest(late.guard(uiOK), http.MethodGet, lateLink, addr)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "an expired code")
	assert.Empty(t, resp.Cookies())
}

// TestUIServesOnlyItsOwnHost: a request whose Host is not exactly the
// host:port the UI listens on is refused, with the session or the code:
// a page of another origin, a DNS name rebound to 127.0.0.1, another
// loopback port.
func TestUIServesOnlyItsOwnHost(t *testing.T) {
	const addr = "127.0.0.1:4711"
	s, link := New(Config{}, addr, time.Now)
	h := s.guard(uiOK)
	for _, host := range []string{"127.0.0.1:4712", "localhost:4711", "evil.example:4711", "evil.example", "127.0.0.1", ""} {
		resp := uiRequest(h, http.MethodGet, link, host)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the code with Host %q", host)
		assert.Empty(t, resp.Cookies(), "Host %q", host)
	}
	resp := uiRequest(h, http.MethodGet, link, addr)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "a refused Host does not use up the code")
	session := resp.Cookies()[0]
	for _, host := range []string{"127.0.0.1:4712", "localhost:4711", "evil.example:4711", "127.0.0.1:4711.evil.example"} {
		resp := uiRequest(h, http.MethodGet, "/", host, session)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "the session with Host %q", host)
	}
	assert.Equal(t, http.StatusOK, uiRequest(h, http.MethodGet, "/", addr, session).StatusCode)
}

func TestCodeRedeemable(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	for _, c := range []struct {
		name       string
		given      string
		used       bool
		expires    time.Time
		redeemable bool
	}{
		{name: "the code, first time, in time", given: "c0de", expires: now.Add(time.Second), redeemable: true},
		{name: "used", given: "c0de", used: true, expires: now.Add(time.Second)},
		{name: "expired", given: "c0de", expires: now},
		{name: "another code", given: "c0dE", expires: now.Add(time.Second)},
		{name: "a prefix", given: "c0d", expires: now.Add(time.Second)},
		{name: "empty", given: "", expires: now.Add(time.Second)},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.redeemable, codeRedeemable(c.given, "c0de", c.used, c.expires, now))
		})
	}
	assert.False(t, codeRedeemable("", "", false, now.Add(time.Second), now), "no code configured opens nothing")
}

func TestOwnHost(t *testing.T) {
	for _, c := range []struct {
		host, addr string
		own        bool
	}{
		{"127.0.0.1:4711", "127.0.0.1:4711", true},
		{"[::1]:4711", "[::1]:4711", true},
		{"127.0.0.1:4712", "127.0.0.1:4711", false},
		{"127.0.0.1", "127.0.0.1:4711", false},
		{"localhost:4711", "127.0.0.1:4711", false},
		{"rebound.example:4711", "127.0.0.1:4711", false},
		{"127.0.0.1:4711.rebound.example", "127.0.0.1:4711", false},
		{"", "127.0.0.1:4711", false},
		{"", "", false},
	} {
		assert.Equal(t, c.own, ownHost(c.host, c.addr), "Host %q for %q", c.host, c.addr)
	}
}

func TestUICookieName(t *testing.T) {
	assert.Equal(t, "magos_ui_4711", cookieName("127.0.0.1:4711"))
	assert.Equal(t, "magos_ui_4711", cookieName("[::1]:4711"))
	assert.NotEqual(t, cookieName("127.0.0.1:4711"), cookieName("127.0.0.1:4712"), "one name a port")
}
