package workspace

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
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

// runnerURL is the URL a runner fetches its artifact from.
func (p ArtifactProxy) runnerURL() string {
	return strings.TrimSuffix(p.URL, "/") + magosv1.ArtifactProxyPath
}

// artifactTokenVolume is the projected volume of the runner's artifact token.
const artifactTokenVolume = "artifact-token"

// artifactTokenExpiry is the token's lifetime; the kubelet renews it at 80%.
const artifactTokenExpiry = 600

// artifactAccess is how the runner container of a run reaches its
// artifact: source-controller's URL, or the proxy's with a token file, on
// a volume mounted into the runner container alone.
func (p ArtifactProxy) artifactAccess(a artifact) (url, tokenFile string, _ *corev1.Volume, _ *corev1.VolumeMount) {
	if p.URL == "" {
		return a.URL, "", nil, nil
	}
	vol := &corev1.Volume{Name: artifactTokenVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
			Audience: magosv1.ArtifactTokenAudience, ExpirationSeconds: new(int64(artifactTokenExpiry)), Path: "token",
		}}},
	}}}
	mount := &corev1.VolumeMount{Name: artifactTokenVolume, MountPath: magosv1.ArtifactTokenDir, ReadOnly: true}
	return p.runnerURL(), magosv1.ArtifactTokenDir + "/token", vol, mount
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

// apiAccessVolume is the runner's Kubernetes API credentials, projected as
// the kubelet's own kube-api-access volume would be (token, cluster CA,
// namespace) but mounted into the runner container alone: the engine's
// init container and any sidecar a mutating webhook adds get no token
// (the Pod's automountServiceAccountToken is off).
const apiAccessVolume = "kube-api-access"

// apiAccessDir is where Kubernetes clients look for in-cluster credentials.
const apiAccessDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// apiTokenExpiry is the token's lifetime, the kubelet's default for its
// own volume (it renews the token at 80%).
const apiTokenExpiry = 3607

func apiAccess() (corev1.Volume, corev1.VolumeMount) {
	vol := corev1.Volume{Name: apiAccessVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: new(int64(apiTokenExpiry)), Path: "token"}},
			// Published in every namespace by kube-controller-manager;
			// optional only for a control plane without it.
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
				Optional:             new(true),
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}},
			}}},
		},
	}}}
	return vol, corev1.VolumeMount{Name: apiAccessVolume, MountPath: apiAccessDir, ReadOnly: true}
}
