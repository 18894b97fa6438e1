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
	"github.com/magos-dev/magos/controllers/internal/metrics"
)

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
	Log      logr.Logger
}

// ServeHTTP serves the asking run's artifact.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != magosv1.ArtifactProxyPath || (req.Method != http.MethodGet && req.Method != http.MethodHead) {
		http.NotFound(w, req)
		return
	}
	token, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	g, err := authorize(req.Context(), s.Client, s.Reader, strings.TrimSpace(token))
	if d := (*denial)(nil); errors.As(err, &d) {
		s.Log.Info("Artifact request refused", "reason", d.reason, "error", d.err.Error(), "remote", req.RemoteAddr)
		metrics.RecordArtifactRequest(d.reason)
		http.Error(w, http.StatusText(d.status), d.status)
		return
	}
	if err != nil {
		s.Log.Error(err, "Authorizing an artifact request")
		metrics.RecordArtifactRequest(ResultFailed)
		http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
		return
	}
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

// relay streams g's artifact from upstream to w, hashing it on the way, and
// reports bytes that do not have the run's digest.
func (s *Server) relay(ctx context.Context, w http.ResponseWriter, method string, g grant) error {
	up := s.Upstream
	if up == nil {
		up = &http.Client{Timeout: 5 * time.Minute}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.URL, nil)
	if err != nil {
		return err
	}
	resp, err := up.Do(req)
	if err != nil {
		return fmt.Errorf("fetching the artifact: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetching the artifact: HTTP %s", resp.Status)
	}
	if s.MaxBytes > 0 && resp.ContentLength > s.MaxBytes {
		return fmt.Errorf("the artifact is %d bytes, more than the limit of %d", resp.ContentLength, s.MaxBytes)
	}
	w.Header().Set("Content-Type", "application/gzip")
	if method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return nil
	}
	// No Content-Length: the response is chunked, so a cut connection is
	// an error the client cannot mistake for the end.
	w.WriteHeader(http.StatusOK)
	want, err := artifactdigest.Parse(g.Digest)
	if err != nil {
		return fmt.Errorf("%w: %w", errHeaderSent, err)
	}
	body := artifactdigest.NewReader(resp.Body, want, s.MaxBytes)
	if _, err := io.Copy(w, body); err != nil {
		return fmt.Errorf("%w: relaying the artifact: %w", errHeaderSent, err)
	}
	if got := body.Sum(); got != want {
		// The runner checks the digest itself and fails the run with
		// ArtifactDigestMismatch, a clearer verdict than a cut download.
		return fmt.Errorf("%w: the artifact has %s, the run expects %s", errDigestMismatch, got, g.Digest)
	}
	return nil
}

// errDigestMismatch marks an artifact served whole whose bytes are not the
// run's.
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
