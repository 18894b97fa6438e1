package gitserver

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/ssh"
)

// Server holds bare repositories under its root and serves them.
type Server struct {
	root           string
	user, password string
	git            string
	// hostKey is the SSH server's key; clientKey the one key it accepts.
	hostKey   ssh.Signer
	clientKey ed25519.PrivateKey
	// refused counts requests or connections refused for lack of
	// credentials.
	refused atomic.Int64
}

// New makes a server for the repositories under root, accepting user and
// password over HTTP and a key of its own (ClientKey) over SSH. An empty
// user serves HTTP to anyone, as a public repository is.
func New(root, user, password string) (*Server, error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("gitserver needs git: %w", err)
	}
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	hostKey, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		return nil, err
	}
	_, clientKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return &Server{root: root, user: user, password: password, git: git, hostKey: hostKey, clientKey: clientKey}, nil
}

// AuthHeader is the HTTP header that authenticates a client, for git's
// http.extraHeader.
func (s *Server) AuthHeader() string {
	return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(s.user+":"+s.password))
}

// Refused is how many HTTP requests and SSH connections were refused for
// lack of credentials.
func (s *Server) Refused() int64 { return s.refused.Load() }

// ClientKey is the SSH private key the server accepts, in OpenSSH PEM form
// (what ssh -i reads).
func (s *Server) ClientKey() ([]byte, error) {
	block, err := ssh.MarshalPrivateKey(s.clientKey, "")
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(block), nil
}

// KnownHosts is the known_hosts line for the SSH server at addr
// (host:port).
func (s *Server) KnownHosts(addr string) string {
	return knownHostsLine(addr, s.hostKey.PublicKey())
}

func knownHostsLine(addr string, key ssh.PublicKey) string {
	host, port, _ := net.SplitHostPort(addr)
	if port != "22" {
		host = "[" + host + "]:" + port
	}
	return host + " " + strings.TrimSpace(string(ssh.MarshalAuthorizedKey(key))) + "\n"
}

// ServeHTTP serves the repositories over smart HTTP on l until l is
// closed, to clients that send the user and password (to anyone when the
// server has no user).
func (s *Server) ServeHTTP(l net.Listener) error {
	backend := &cgi.Handler{
		Path: s.git,
		Args: []string{"http-backend"},
		Env:  []string{"GIT_PROJECT_ROOT=" + s.root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.user != "" && !s.authenticated(r) {
			s.refused.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="modules"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	})
	err := (&http.Server{Handler: h, ReadHeaderTimeout: 0}).Serve(l)
	if err == http.ErrServerClosed {
		return nil
	}
	return err
}

// authenticated tells whether r carries the server's user and password.
func (s *Server) authenticated(r *http.Request) bool {
	user, password, ok := r.BasicAuth()
	return ok && subtle.ConstantTimeCompare([]byte(user), []byte(s.user)) == 1 &&
		subtle.ConstantTimeCompare([]byte(password), []byte(s.password)) == 1
}

// repoPath is the bare repository of name.
func (s *Server) repoPath(name string) string {
	return filepath.Join(s.root, strings.TrimSuffix(name, ".git")+".git")
}

// ensureRoot makes the root directory.
func (s *Server) ensureRoot() error { return os.MkdirAll(s.root, 0o755) }
