package artifactproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/apis/artifactdigest"
	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/artifacthost"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/workspace/config"
)

// recordWait is how long after its creation a Job that its Workspace's
// status does not record yet is answered 503, which the runner retries,
// instead of 403: the controller records a run just after it creates the
// Job.
const recordWait = time.Minute

// Results of one request, the values of the result label of
// magos_artifact_proxy_requests_total.
const (
	ResultServed          = metrics.ArtifactServed
	ResultUnauthenticated = metrics.ArtifactUnauthenticated
	ResultForbidden       = metrics.ArtifactForbidden
	ResultFailed          = metrics.ArtifactFailed
)

// Server is the artifact proxy.
type Server struct {
	// Client creates TokenReviews.
	Client client.Client
	// Reader reads Pods, Jobs, Workspaces and sources from the apiserver.
	Reader client.Reader
	// Upstream downloads from source-controller; nil is a client with a
	// 5-minute timeout.
	Upstream *http.Client
	// MaxBytes is the largest artifact served (0: no limit).
	MaxBytes int64
	// Guards are the cluster's guards on a Workspace's source, applied as
	// the reconciler applies them.
	Guards config.Guards
	// Hosts are the hosts artifacts are downloaded from (nil: any).
	Hosts artifacthost.Hosts
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	Log logr.Logger
}

// ServeHTTP serves the asking run's artifact.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != magosv1.ArtifactProxyPath || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
		http.NotFound(w, req)
		return
	}
	token, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	g, err := s.authorize(req.Context(), strings.TrimSpace(token))
	if d := (*denial)(nil); errors.As(err, &d) {
		s.Log.Info("Artifact request refused", "reason", d.reason, "error", d.err.Error(), "remote", req.RemoteAddr)
		metrics.RecordArtifactRequest(d.reason)
		if d.status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "2")
		}
		http.Error(w, http.StatusText(d.status), d.status)
		return
	}
	if err != nil {
		s.Log.Error(err, "Authorizing an artifact request")
		metrics.RecordArtifactRequest(ResultFailed)
		http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
		return
	}
	s.serve(w, req, g)
}

// serve answers req with g's artifact, counts the request and logs a
// failure.
func (s *Server) serve(w http.ResponseWriter, req *http.Request, g grant) {
	log := s.Log.WithValues("namespace", g.Namespace, "workspace", g.Workspace, "job", g.Job)
	if err := s.relay(req.Context(), w, req.Method, g); err != nil {
		log.Error(err, "Serving an artifact")
		metrics.RecordArtifactRequest(ResultFailed)
		if errors.Is(err, errDigestMismatch) {
			return
		}
		if errors.Is(err, errHeaderSent) {
			// The status line is out: cut the connection so the runner
			// sees a broken download, never a complete wrong one.
			panic(http.ErrAbortHandler)
		}
		http.Error(w, http.StatusText(http.StatusBadGateway), http.StatusBadGateway)
		return
	}
	log.V(1).Info("Artifact served", "digest", g.Digest)
	metrics.RecordArtifactRequest(ResultServed)
}

// errHeaderSent marks a failure after the response started.
var errHeaderSent = errors.New("response started")

// now is the proxy's clock.
func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// upstream is the client that downloads artifacts: the Upstream set, or
// one bound to Hosts; it follows no redirect either way.
func (s *Server) upstream() *http.Client {
	if s.Upstream == nil {
		return s.Hosts.Client(5 * time.Minute)
	}
	c := *s.Upstream
	c.CheckRedirect = artifacthost.NoRedirect
	return &c
}

// relay streams g's artifact from upstream to w, hashing it on the way,
// and holds the last bytes back until the digest is checked: bytes that
// do not have the run's digest are never delivered whole.
func (s *Server) relay(ctx context.Context, w http.ResponseWriter, method string, g grant) error {
	if err := s.Hosts.Check(g.URL); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL, nil)
	if err != nil {
		return err
	}
	resp, err := s.upstream().Do(req)
	if err != nil {
		return fmt.Errorf("fetching the artifact: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return fmt.Errorf("fetching the artifact: HTTP %s, a redirect, which the proxy does not follow", resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetching the artifact: HTTP %s", resp.Status)
	}
	if s.MaxBytes > 0 && resp.ContentLength > s.MaxBytes {
		return fmt.Errorf("the artifact is %d bytes, more than the limit of %d", resp.ContentLength, s.MaxBytes)
	}
	want, err := artifactdigest.Parse(g.Digest)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/gzip")
	if method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return nil
	}
	// No Content-Length: the response is chunked, so a cut connection is
	// an error the client cannot mistake for the end.
	w.WriteHeader(http.StatusOK)
	body := artifactdigest.NewReader(resp.Body, want, s.MaxBytes)
	held, err := copyHoldingBack(w, body, holdBack)
	if err != nil {
		return fmt.Errorf("%w: relaying the artifact: %w", errHeaderSent, err)
	}
	if got := body.Sum(); got != want {
		// The held-back bytes are never sent: the response ends short of
		// the artifact, whose digest the runner then finds wrong (it fails
		// the run with ArtifactDigestMismatch, a clearer verdict than a cut
		// download), and a client that checks nothing never has it whole.
		return fmt.Errorf("%w: the artifact has %s, the run expects %s", errDigestMismatch, got, g.Digest)
	}
	if _, err := w.Write(held); err != nil {
		return fmt.Errorf("%w: relaying the artifact: %w", errHeaderSent, err)
	}
	return nil
}

// holdBack is how many of an artifact's last bytes the proxy keeps until
// the artifact's digest is checked (all of a smaller artifact).
const holdBack = 32 << 10

// copyHoldingBack copies r to w but for its last n bytes (fewer if r has
// fewer), which it returns unsent once r ends.
func copyHoldingBack(w io.Writer, r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, 2*n)
	for {
		if len(buf) == cap(buf) {
			if _, err := w.Write(buf[:len(buf)-n]); err != nil {
				return nil, err
			}
			buf = buf[:copy(buf, buf[len(buf)-n:])]
		}
		k, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if errors.Is(err, io.EOF) {
			if extra := len(buf) - n; extra > 0 {
				if _, err := w.Write(buf[:extra]); err != nil {
					return nil, err
				}
				buf = buf[extra:]
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// errDigestMismatch marks an artifact whose bytes are not the run's; all
// but its last bytes were served.
var errDigestMismatch = errors.New("digest mismatch")

// Serve runs the proxy on ln until ctx ends, and closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	s.Log.Info("Serving run artifacts", "address", ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
