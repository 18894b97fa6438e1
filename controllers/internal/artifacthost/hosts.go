package artifacthost

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Hosts are the hosts artifacts may be downloaded from, each a host name
// or IP address (any port) or host:port. Names compare without case and
// without a trailing dot. "*", or a nil list, allows any host.
type Hosts []string

// DefaultHosts are the names of source-controller's Service in Flux's own
// installation (namespace flux-system): the address it advertises in
// artifact URLs (source-controller.flux-system.svc.cluster.local.) and the
// shorter names that reach the same Service.
var DefaultHosts = Hosts{
	"source-controller.flux-system.svc.cluster.local",
	"source-controller.flux-system.svc",
	"source-controller.flux-system",
}

// BindFlag registers --artifact-hosts on fs, with DefaultHosts as its
// default: the first use of the flag replaces them, later uses add to it.
func (h *Hosts) BindFlag(fs *flag.FlagSet) {
	*h = slices.Clone(DefaultHosts)
	set := false
	fs.Func("artifact-hosts", "Comma-separated hosts (name, IP address, or host:port) Flux artifacts are downloaded from (repeatable); "+
		"an artifact URL on any other host is refused, and no redirect is followed; * allows any host. Default: source-controller's Service in flux-system ("+
		strings.Join(DefaultHosts, ", ")+").",
		func(v string) error {
			if !set {
				*h, set = Hosts{}, true
			}
			for _, e := range strings.Split(v, ",") {
				if e = strings.TrimSpace(e); e == "" {
					continue
				}
				if _, _, err := parseEntry(e); err != nil {
					return err
				}
				*h = append(*h, e)
			}
			return nil
		})
}

// Validate refuses an entry that is not a host or host:port, and a list
// that names none.
func (h Hosts) Validate() error {
	if h != nil && len(h) == 0 {
		return errors.New("--artifact-hosts names no host (* allows any)")
	}
	for _, e := range h {
		if _, _, err := parseEntry(e); err != nil {
			return fmt.Errorf("--artifact-hosts: %w", err)
		}
	}
	return nil
}

// parseEntry splits an entry into its normalised host and its port ("" for
// any).
func parseEntry(e string) (host, port string, err error) {
	if e == "*" {
		return e, "", nil
	}
	host = e
	if strings.HasPrefix(e, "[") || strings.Count(e, ":") == 1 {
		if host, port, err = net.SplitHostPort(e); err != nil {
			return "", "", fmt.Errorf("%q is not a host or host:port: %w", e, err)
		}
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return "", "", fmt.Errorf("%q is not a host:port", e)
		}
	}
	host = normal(host)
	if host == "" || strings.ContainsAny(host, "/@?#* ") {
		return "", "", fmt.Errorf("%q is not a host or host:port", e)
	}
	return host, port, nil
}

// normal is a host name in lower case without a trailing dot.
func normal(host string) string { return strings.TrimSuffix(strings.ToLower(host), ".") }

// Allows reports whether u is an http(s) URL on one of the hosts.
func (h Hosts) Allows(u *url.URL) bool {
	if u == nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return false
	}
	if h == nil || slices.Contains(h, "*") {
		return true
	}
	host, port := normal(u.Hostname()), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return slices.ContainsFunc(h, func(e string) bool {
		eh, ep, err := parseEntry(e)
		return err == nil && eh == host && (ep == "" || ep == port)
	})
}

// ErrNotAllowed marks a URL on a host the list does not name.
var ErrNotAllowed = errors.New("not an artifact host of this cluster (--artifact-hosts)")

// Check returns an error wrapping ErrNotAllowed when rawURL is not an
// http(s) URL on one of the hosts. The error names the host, never the
// URL's path or query.
func (h Hosts) Check(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("artifact URL: %w", ErrNotAllowed)
	}
	if !h.Allows(u) {
		return fmt.Errorf("artifact host %q: %w", u.Host, ErrNotAllowed)
	}
	return nil
}

// Client is an HTTP client, with timeout, that requests only URLs on the
// hosts and follows no redirect: a redirect's response is returned as is,
// which a caller expecting 200 refuses.
func (h Hosts) Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:       timeout,
		Transport:     &transport{hosts: h, next: http.DefaultTransport.(*http.Transport).Clone()},
		CheckRedirect: NoRedirect,
	}
}

// NoRedirect is an http.Client's CheckRedirect that follows no redirect.
func NoRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// transport refuses requests to hosts the list does not name.
type transport struct {
	hosts Hosts
	next  http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.hosts.Allows(req.URL) {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("artifact host %q: %w", req.URL.Host, ErrNotAllowed)
	}
	return t.next.RoundTrip(req)
}
