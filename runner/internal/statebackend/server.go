package statebackend

import (
	"context"
	"crypto/md5" //nolint:gosec // Content-MD5 is the protocol's integrity check, not a security measure.
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// MaxStateBytes bounds a state upload and the state read back once
// unpacked; the state Secret cannot hold more than 1 MiB of gzip'd state
// anyway.
const MaxStateBytes = 256 << 20

// username is the basic-auth user the engine presents.
const username = "magos"

// Server serves a Store over OpenTofu's http backend protocol on loopback.
type Server struct {
	store    *Store
	log      *slog.Logger
	password string
	listener net.Listener
	http     *http.Server
	done     chan struct{}

	mu       sync.Mutex
	conflict *LockInfo
	// hold keeps the lock Lease from the engine's first lock to Close
	// (HoldLock); held is the lock ID the Lease records then, and
	// engineLock the ID of the engine's lock in force ("" between its
	// commands).
	hold       bool
	held       string
	engineLock string
	lastErr    error
	// state is the state the engine last read or wrote; seen says it did.
	state []byte
	seen  bool
}

// Start serves store on 127.0.0.1 at a random port until Close. Requests
// must carry a random password that only Env reveals.
func Start(store *Store, log *slog.Logger) (*Server, error) {
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the state backend: %w", err)
	}
	s := &Server{store: store, log: log, password: hex.EncodeToString(secret), listener: ln, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/state", s.handleState)
	mux.HandleFunc("/lock", s.handleLock)
	s.http = &http.Server{Handler: s.auth(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln)
	}()
	return s, nil
}

// HoldLock makes the server keep the lock Lease from the engine's first
// lock until Close, for a run of several engine commands (the fast path's
// plan and apply): the Lease is written twice per run instead of twice
// per command, and no other run can take the lock between the commands.
// The engine's later locks in the run are answered from memory and its
// state writes checked against the lock the Lease records.
func (s *Server) HoldLock() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = true
}

// Close stops the server and releases a lock it holds (HoldLock).
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	<-s.done
	s.mu.Lock()
	held := s.held
	s.held, s.engineLock = "", ""
	s.mu.Unlock()
	if held != "" {
		s.log.Info("Releasing the state lock held for the run", "lockID", held, "lease", s.store.LockLease)
		if uerr := s.store.Unlock(ctx, held); uerr != nil {
			err = errors.Join(err, fmt.Errorf("releasing the state lock: %w", uerr))
		}
	}
	return err
}

// lockID is the ID the lock Lease records for the engine's lock id: the
// held lock's while the server holds the Lease for the engine.
func (s *Server) lockID(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != "" && id != "" && id == s.engineLock {
		return s.held
	}
	return id
}

// lockHeld answers the engine's LOCK or UNLOCK of id from memory while the
// server holds the Lease for the run; handled is false when the Lease
// must be written.
func (s *Server) lockHeld(method, id string) (handled bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.hold || s.held == "" {
		return false
	}
	switch {
	case method == "LOCK" && s.engineLock == "":
		s.engineLock = id
		return true
	case method == "UNLOCK" && id == s.engineLock:
		s.engineLock = ""
		return true
	}
	return false
}

// locked records that the engine took the Lease with id; a holding server
// keeps it from now on.
func (s *Server) locked(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold && s.held == "" {
		s.held, s.engineLock = id, id
	}
}

// URL is the server's base URL.
func (s *Server) URL() string { return "http://" + s.listener.Addr().String() }

// Password is the basic-auth password; mask it like any secret.
func (s *Server) Password() string { return s.password }

// Env is what the engine needs in its environment to use the server with an
// empty `backend "http" {}` block.
func (s *Server) Env() map[string]string {
	return map[string]string{
		"TF_HTTP_ADDRESS":        s.URL() + "/state",
		"TF_HTTP_LOCK_ADDRESS":   s.URL() + "/lock",
		"TF_HTTP_UNLOCK_ADDRESS": s.URL() + "/lock",
		"TF_HTTP_LOCK_METHOD":    "LOCK",
		"TF_HTTP_UNLOCK_METHOD":  "UNLOCK",
		"TF_HTTP_UPDATE_METHOD":  http.MethodPost,
		"TF_HTTP_USERNAME":       username,
		"TF_HTTP_PASSWORD":       s.password,
	}
}

// LockConflict returns the lock that stopped the engine, if a lock request
// found the state locked by someone else.
func (s *Server) LockConflict() (LockInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conflict == nil {
		return LockInfo{}, false
	}
	return *s.conflict, true
}

// State is the state the engine last read or wrote (nil: there is none);
// ok is false when the engine has done neither.
func (s *Server) State() (state []byte, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.seen
}

func (s *Server) saw(state []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state, s.seen = state, true
}

// LastError is the last storage error the engine was answered with; its
// message names objects, never state content.
func (s *Server) LastError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != username || subtle.ConstantTimeCompare([]byte(p), []byte(s.password)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) handleState(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	switch r.Method {
	case http.MethodGet:
		state, err := s.store.GetState(ctx)
		if err != nil {
			s.fail(w, err)
			return
		}
		s.saw(state)
		if state == nil {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(state)
	case http.MethodPost, http.MethodPut:
		body, err := readBody(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := s.store.CheckLock(ctx, s.lockID(r.URL.Query().Get("ID"))); err != nil {
			s.lockRefused(w, err)
			return
		}
		if err := s.store.PutState(ctx, body); err != nil {
			s.fail(w, err)
			return
		}
		s.saw(body)
		w.WriteHeader(http.StatusOK)
	case http.MethodDelete:
		if err := s.store.CheckLock(ctx, s.lockID(r.URL.Query().Get("ID"))); err != nil {
			s.lockRefused(w, err)
			return
		}
		if err := s.store.DeleteState(ctx); err != nil {
			s.fail(w, err)
			return
		}
		s.saw(nil)
		w.WriteHeader(http.StatusOK)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (s *Server) handleLock(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var info LockInfo
	if err := json.Unmarshal(body, &info); err != nil || info.ID == "" {
		http.Error(w, "the body must be lock info JSON with an ID", http.StatusBadRequest)
		return
	}
	if (r.Method == "LOCK" || r.Method == "UNLOCK") && s.lockHeld(r.Method, info.ID) {
		s.log.Info("The state lock is held for the run", "method", r.Method, "lockID", info.ID, "lease", s.store.LockLease)
		w.WriteHeader(http.StatusOK)
		return
	}
	switch r.Method {
	case "LOCK":
		s.log.Info("Locking the state", "lockID", info.ID, "operation", info.Operation, "lease", s.store.LockLease)
		if err = s.store.Lock(r.Context(), body); err == nil {
			s.locked(info.ID)
		}
	case "UNLOCK":
		s.log.Info("Unlocking the state", "lockID", info.ID, "lease", s.store.LockLease)
		err = s.store.Unlock(r.Context(), info.ID)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if err != nil {
		s.lockRefused(w, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// lockRefused answers a request the lock forbids: 423 Locked (or 409
// Conflict for a lock ID mismatch) with the holder's lock info, which the
// engine shows. Other errors are storage failures.
func (s *Server) lockRefused(w http.ResponseWriter, err error) {
	var locked *LockedError
	if !errors.As(err, &locked) {
		s.fail(w, err)
		return
	}
	s.mu.Lock()
	held := locked.Held
	s.conflict = &held
	s.mu.Unlock()
	s.log.Info("The state is locked by another run", "holder", held.Holder())
	status := http.StatusLocked
	if errors.Is(err, errMismatch) {
		status = http.StatusConflict
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(locked.Raw)
}

func (s *Server) fail(w http.ResponseWriter, err error) {
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
	s.log.Error("State backend request failed", "error", err)
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// readBody reads a bounded request body and checks its Content-MD5, if any.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxStateBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxStateBytes {
		return nil, fmt.Errorf("body larger than %d bytes", MaxStateBytes)
	}
	if want := r.Header.Get("Content-MD5"); want != "" {
		sum := md5.Sum(body) //nolint:gosec // see the import.
		if base64.StdEncoding.EncodeToString(sum[:]) != want {
			return nil, errors.New("Content-MD5 does not match the body")
		}
	}
	return body, nil
}
