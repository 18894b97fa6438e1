package localsource

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/apis/artifactdigest"
)

// Options configure a Server.
type Options struct {
	// Addr is where the artifacts are served. Default: 127.0.0.1 on a free
	// port.
	Addr string
	// Listener, if set, serves the artifacts instead of a listener on Addr:
	// e.g. one inside a test node's network namespace, which Pods reach.
	Listener net.Listener
	// StorageDir holds the artifact files. Default: a temporary directory
	// removed by Close.
	StorageDir string
	// Branch names the revision of a directory (<branch>@sha1:<content>)
	// when the GitRepository's spec.ref names none. Default: main.
	Branch string
	// DigestAlgorithm is the algorithm of the digests recorded, as
	// source-controller's --artifact-digest-algo: sha256 (the default),
	// sha384, sha512 or blake3.
	DigestAlgorithm string
	// CreateMissing creates a GitRepository that does not exist when
	// publishing to it, instead of failing.
	CreateMissing bool
	// Logger receives the server's logs. Default: ctrl.Log.
	Logger *logr.Logger
}

// Server serves artifacts and records them in GitRepositories' status.
type Server struct {
	client    client.Client
	opts      Options
	ownsStore bool

	mu       sync.Mutex
	listener net.Listener
	http     *http.Server
	served   chan struct{}
	// published is the digest last published per GitRepository.
	published map[types.NamespacedName]string
}

// New prepares a Server that writes GitRepository status with c (an admin
// client; any scheme will do).
func New(c client.Client, opts Options) (*Server, error) {
	if c == nil {
		return nil, errors.New("localsource: a client is required")
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Branch == "" {
		opts.Branch = "main"
	}
	if opts.DigestAlgorithm == "" {
		opts.DigestAlgorithm = "sha256"
	} else if !artifactdigest.Supported(opts.DigestAlgorithm) {
		return nil, fmt.Errorf("localsource: unsupported digest algorithm %q", opts.DigestAlgorithm)
	}
	if opts.Logger == nil {
		l := ctrl.Log.WithName("localsource")
		opts.Logger = &l
	}
	s := &Server{client: c, opts: opts, published: map[types.NamespacedName]string{}}
	if s.opts.StorageDir == "" {
		dir, err := os.MkdirTemp("", "magos-localsource-")
		if err != nil {
			return nil, err
		}
		s.opts.StorageDir, s.ownsStore = dir, true
	} else if err := os.MkdirAll(s.opts.StorageDir, 0o755); err != nil {
		return nil, err
	}
	return s, nil
}

// Start listens and serves the artifacts in the background.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener != nil {
		return errors.New("localsource: already started")
	}
	l := s.opts.Listener
	if l == nil {
		var err error
		if l, err = net.Listen("tcp", s.opts.Addr); err != nil {
			return fmt.Errorf("localsource: %w", err)
		}
	}
	s.listener = l
	s.http = &http.Server{Handler: http.FileServer(http.Dir(s.opts.StorageDir)), ReadHeaderTimeout: 10 * time.Second}
	s.served = make(chan struct{})
	go func() {
		defer close(s.served)
		if err := s.http.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.opts.Logger.Error(err, "Serving artifacts")
		}
	}()
	s.opts.Logger.Info("Serving artifacts", "url", s.urlLocked(), "storage", s.opts.StorageDir)
	return nil
}

// Close stops serving and removes the storage it created.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	if s.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = s.http.Shutdown(ctx)
		<-s.served
		s.http, s.listener = nil, nil
	}
	if s.ownsStore {
		err = errors.Join(err, os.RemoveAll(s.opts.StorageDir))
	}
	return err
}

// URL is the base URL of the artifacts ("http://127.0.0.1:<port>"); empty
// before Start.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.urlLocked()
}

func (s *Server) urlLocked() string {
	if s.listener == nil {
		return ""
	}
	return "http://" + s.listener.Addr().String()
}

// store writes an artifact file under its relative path.
func (s *Server) store(rel string, data []byte) error {
	p := filepath.Join(s.opts.StorageDir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}
