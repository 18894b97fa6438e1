package workspace

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/magos-dev/magos/controllers/internal/artifactproxy"
)

// ArtifactProxy configures the artifact proxy (package artifactproxy): with
// a URL, runners fetch their artifact there with a token bound to their Pod
// instead of from source-controller, which then needs to admit only the
// workspace-controller.
type ArtifactProxy struct {
	// BindAddress is where this controller serves the proxy; empty serves
	// none.
	BindAddress string
	// Listener, when set, is the socket the proxy serves on instead of
	// BindAddress: a program that embeds the controller opened it itself.
	Listener net.Listener
	// URL is the proxy's base URL as runner Pods reach it (a Service in
	// front of the controllers); empty gives runners source-controller's
	// URLs.
	URL string
}

// BindFlags registers the proxy's flags on fs.
func (p *ArtifactProxy) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&p.BindAddress, "artifact-proxy-bind-address", "",
		"Address the artifact proxy listens on (e.g. :9443); empty serves none.")
	fs.StringVar(&p.URL, "artifact-proxy-url", "",
		"Base URL by which runner Pods reach the artifact proxy (e.g. http://magos-workspace-controller-artifacts.magos-system.svc:9443); "+
			"empty: runners download from source-controller directly, which must then admit them.")
}

// Validate refuses a URL that is not a base http(s) URL.
func (p ArtifactProxy) Validate() error {
	if p.URL == "" {
		return nil
	}
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return fmt.Errorf("--artifact-proxy-url must be an http(s) URL without user or query, got %q", p.URL)
	}
	return nil
}

// addArtifactProxy serves the proxy on every replica (leader or not), when
// a bind address is set.
func addArtifactProxy(mgr ctrl.Manager, p ArtifactProxy) error {
	if p.BindAddress == "" && p.Listener == nil {
		return nil
	}
	s := &artifactproxy.Server{
		Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		MaxBytes: maxArtifactBytes, Log: ctrl.Log.WithName("artifact-proxy"),
	}
	return mgr.Add(proxyRunnable{s, p})
}

// maxArtifactBytes is the largest artifact the proxy relays, the runner's
// own limit on a packed artifact.
const maxArtifactBytes = 256 << 20

// proxyRunnable runs the proxy on every replica.
type proxyRunnable struct {
	s *artifactproxy.Server
	p ArtifactProxy
}

func (r proxyRunnable) Start(ctx context.Context) error {
	ln := r.p.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", r.p.BindAddress); err != nil {
			return fmt.Errorf("artifact proxy: %w", err)
		}
	}
	return r.s.Serve(ctx, ln)
}

func (proxyRunnable) NeedLeaderElection() bool { return false }
