package artifactproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr/testr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magos-dev/magos/controllers/internal/artifacthost"
)

// upstream is a stand-in for source-controller's file server: it serves
// data at any path and counts the requests.
type upstream struct {
	*httptest.Server
	hits atomic.Int32
}

func newUpstream(t *testing.T, h http.HandlerFunc) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

// proxied serves g through s, as the proxy serves an authorized request,
// and returns the response: its status, the bytes received and the error
// that ended the body (nil for a clean end).
func proxied(t *testing.T, s *Server, g grant) (int, []byte, error) {
	t.Helper()
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, g) }))
	defer front.Close()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, front.URL, nil)
	require.NoError(t, err)
	resp, err := front.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// TestUpstreamRedirectsAreNotFollowed: a redirect from the artifact's
// host, even to another listed host, is an error: its target is never
// asked, with the proxy's own client or one set as Upstream.
func TestUpstreamRedirectsAreNotFollowed(t *testing.T) {
	data := []byte("an artifact")
	target := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data) })
	redirecting := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/gitrepository/team-a/infra/a.tar.gz", http.StatusFound)
	})
	g := grant{URL: redirecting.URL + "/gitrepository/team-a/infra/a.tar.gz", Digest: sha256Digest(data)}
	for name, s := range map[string]*Server{
		"the proxy's client": {Hosts: artifacthost.Hosts{"127.0.0.1"}, Log: testr.New(t)},
		"a client set":       {Hosts: artifacthost.Hosts{"127.0.0.1"}, Upstream: &http.Client{}, Log: testr.New(t)},
	} {
		t.Run(name, func(t *testing.T) {
			code, body, _ := proxied(t, s, g)
			assert.Equal(t, http.StatusBadGateway, code, "%s", body)
			assert.Zero(t, target.hits.Load(), "the redirect's target was not asked")
		})
	}
}

// TestUpstreamHostsAreBounded: an artifact URL on a host the admin did not
// list (--artifact-hosts) is not fetched.
func TestUpstreamHostsAreBounded(t *testing.T) {
	data := []byte("an artifact")
	up := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data) })
	g := grant{URL: up.URL + "/gitrepository/team-a/infra/a.tar.gz", Digest: sha256Digest(data)}
	for name, s := range map[string]*Server{
		"the proxy's client": {Hosts: artifacthost.DefaultHosts, Log: testr.New(t)},
		"a client set":       {Hosts: artifacthost.DefaultHosts, Upstream: &http.Client{}, Log: testr.New(t)},
	} {
		t.Run(name, func(t *testing.T) {
			code, body, _ := proxied(t, s, g)
			assert.Equal(t, http.StatusBadGateway, code, "%s", body)
			assert.Zero(t, up.hits.Load(), "a host not listed was not asked")
		})
	}
	code, body, err := proxied(t, &Server{Hosts: artifacthost.Hosts{"127.0.0.1"}, Log: testr.New(t)}, g)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, data, body, "a listed host is")
}

// TestAMismatchedArtifactIsNeverDeliveredWhole: the proxy holds an
// artifact's last bytes back until it has checked the digest, so bytes
// that do not have the run's digest never reach the runner whole, however
// small; bytes that have it arrive whole.
func TestAMismatchedArtifactIsNeverDeliveredWhole(t *testing.T) {
	for _, size := range []int{10, holdBack - 1, holdBack, 3*holdBack + 17, 1 << 20} {
		data := make([]byte, size)
		_, _ = rand.Read(data)
		up := newUpstream(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data) })
		url := up.URL + "/gitrepository/team-a/infra/a.tar.gz"
		s := &Server{Hosts: artifacthost.Hosts{"127.0.0.1"}, Log: testr.New(t)}

		code, body, err := proxied(t, s, grant{URL: url, Digest: sha256Digest(data)})
		require.NoError(t, err, "size %d", size)
		assert.Equal(t, http.StatusOK, code)
		assert.True(t, bytes.Equal(data, body), "size %d: the artifact whole", size)

		wrong := sha256Digest([]byte("other bytes"))
		_, body, _ = proxied(t, s, grant{URL: url, Digest: wrong})
		assert.Less(t, len(body), len(data), "size %d: short of the artifact", size)
		assert.Equal(t, max(0, size-holdBack), len(body), "size %d: all but the bytes held back", size)
		assert.True(t, bytes.HasPrefix(data, body), "size %d", size)
	}
}

// TestCopyHoldingBack pins the copy's arithmetic on reads of every size.
func TestCopyHoldingBack(t *testing.T) {
	data := []byte(strings.Repeat("0123456789", 1000))
	for _, n := range []int{1, 7, 100, 9999, 10000, 20000} {
		var out bytes.Buffer
		held, err := copyHoldingBack(&out, io.LimitReader(bytes.NewReader(data), int64(len(data))), n)
		require.NoError(t, err)
		assert.Equal(t, data, append(out.Bytes(), held...), "n %d", n)
		assert.Equal(t, min(n, len(data)), len(held), "n %d", n)
	}
}
