package config

import (
	"flag"
	"fmt"
	"net"
	"net/url"
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
