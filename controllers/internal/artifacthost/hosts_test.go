package artifacthost

import (
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHostsFlag(t *testing.T) {
	parse := func(args ...string) (Hosts, error) {
		var h Hosts
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		h.BindFlag(fs)
		err := fs.Parse(args)
		return h, err
	}
	h, err := parse()
	require.NoError(t, err)
	assert.Equal(t, DefaultHosts, h, "source-controller's Service in flux-system by default")
	h, err = parse("--artifact-hosts=source-controller.flux.svc.cluster.local, 10.0.0.7:80", "--artifact-hosts=[fd00::7]:9090")
	require.NoError(t, err)
	assert.Equal(t, Hosts{"source-controller.flux.svc.cluster.local", "10.0.0.7:80", "[fd00::7]:9090"}, h, "the flag replaces the default, then adds")
	for _, bad := range []string{"http://x", "x:", "a/b", "u@x"} {
		_, err := parse("--artifact-hosts=" + bad)
		assert.Error(t, err, bad)
	}
	assert.Error(t, Hosts{}.Validate(), "a list naming no host")
	assert.NoError(t, DefaultHosts.Validate())
}

func TestHostsAllow(t *testing.T) {
	h := Hosts{"source-controller.flux-system.svc.cluster.local", "10.0.0.7:80", "[fd00::7]:9090"}
	for raw, ok := range map[string]bool{
		"http://source-controller.flux-system.svc.cluster.local./gitrepository/a/b/c.tar.gz":     true,
		"http://Source-Controller.flux-system.svc.cluster.local:8080/gitrepository/a/b/c.tar.gz": true,
		"https://source-controller.flux-system.svc.cluster.local/gitrepository/a/b/c.tar.gz":     true,
		"http://10.0.0.7/gitrepository/a/b/c.tar.gz":                                             true,
		"http://10.0.0.7:80/gitrepository/a/b/c.tar.gz":                                          true,
		"http://[fd00::7]:9090/x.tar.gz":                                                         true,
		"http://10.0.0.7:8080/gitrepository/a/b/c.tar.gz":                                        false,
		"http://169.254.169.254/latest/meta-data":                                                false,
		"http://source-controller.flux-system.svc.cluster.local.evil.example/c.tar.gz":           false,
		"http://u:p@source-controller.flux-system.svc.cluster.local/c.tar.gz":                    false,
		"ftp://source-controller.flux-system.svc.cluster.local/c.tar.gz":                         false,
		"http://[fd00::7]/x.tar.gz":                                                              false,
		"source-controller.flux-system.svc.cluster.local/gitrepository/a/b/c.tar.gz":             false,
	} {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		assert.Equal(t, ok, h.Allows(u), raw)
		assert.Equal(t, !ok, errors.Is(h.Check(raw), ErrNotAllowed), raw)
	}
	any, err := url.Parse("http://anywhere.example/x")
	require.NoError(t, err)
	assert.True(t, Hosts(nil).Allows(any), "nil allows any host")
	assert.True(t, Hosts{"*"}.Allows(any), "* allows any host")
	assert.False(t, Hosts{"*"}.Allows(&url.URL{Scheme: "file", Path: "/etc/passwd"}), "never another scheme")
}

// The client requests listed hosts only and follows no redirect: the
// redirect's target, even on a listed host, is never asked.
func TestClientRefusesOtherHostsAndRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { elsewhere.Add(1) }))
	defer target.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/x.tar.gz", http.StatusFound)
	}))
	defer redirecting.Close()
	c := Hosts{"127.0.0.1"}.Client(5 * time.Second)

	resp, err := c.Get(redirecting.URL + "/a.tar.gz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusFound, resp.StatusCode, "the redirect is the answer")
	assert.Zero(t, elsewhere.Load(), "its target was not asked")

	resp, err = Hosts{"source-controller.flux-system"}.Client(5 * time.Second).Get(target.URL + "/x.tar.gz")
	if err == nil {
		resp.Body.Close()
	}
	assert.ErrorIs(t, err, ErrNotAllowed)
	assert.Zero(t, elsewhere.Load(), "a host not listed is not asked")
}
