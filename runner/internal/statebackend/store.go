package statebackend

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Layout shared with OpenTofu's kubernetes backend.
const (
	// LockInfoAnnotation holds the lock info JSON on the Lease.
	LockInfoAnnotation = "app.terraform.io/lock-info"
	// maxAttempts bounds retries of optimistic-concurrency conflicts.
	maxAttempts = 5
)

// SecretClient reads and replaces Secrets by name; client-go's
// SecretInterface satisfies it. It needs no create: the workspace-controller
// creates the state Secret before a run, and the runner may not create
// Secrets.
type SecretClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error)
	Update(ctx context.Context, s *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error)
}

// LeaseClient reads and replaces Leases by name; client-go's LeaseInterface
// satisfies it. Like the state Secret, the lock Lease is created by the
// workspace-controller.
type LeaseClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error)
	Update(ctx context.Context, l *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error)
}

// ErrNotReserved means the state Secret or lock Lease does not exist: the
// workspace-controller creates both before every run, and the runner may
// not create them.
var ErrNotReserved = errors.New("it does not exist; the workspace-controller creates it before every run and the runner may not create it")

// Store is where one Workspace's state and lock live.
type Store struct {
	Secrets SecretClient
	Leases  LeaseClient
	// Workspace is the Magos Workspace; it is the tfstateSecretSuffix label.
	Workspace string
	// StateSecret and LockLease are the object names.
	StateSecret string
	LockLease   string
}

// LockInfo is the engine's lock information, as its JSON is laid out.
type LockInfo struct {
	ID        string    `json:"ID"`
	Operation string    `json:"Operation"`
	Info      string    `json:"Info"`
	Who       string    `json:"Who"`
	Version   string    `json:"Version"`
	Created   time.Time `json:"Created"`
	Path      string    `json:"Path"`
}

// Holder describes who holds a lock, for people.
func (l LockInfo) Holder() string {
	s := l.Who
	if s == "" {
		s = "unknown"
	}
	if l.ID != "" {
		s += " (lock ID " + l.ID
		if l.Operation != "" {
			s += ", " + l.Operation
		}
		if !l.Created.IsZero() {
			s += ", since " + l.Created.UTC().Format(time.RFC3339)
		}
		s += ")"
	}
	return s
}

// LockedError says the lock is held by someone else.
type LockedError struct {
	// Held is the holder's lock info; Raw is its JSON as stored.
	Held LockInfo
	Raw  []byte
}

func (e *LockedError) Error() string { return "the state is locked by " + e.Held.Holder() }

// errMismatch means an unlock or a write came with the wrong lock ID.
var errMismatch = errors.New("lock ID does not match the lock held")

// GetState returns the state JSON, or nil when there is none. State that
// unpacks to more than MaxStateBytes is an error.
func (s *Store) GetState(ctx context.Context) ([]byte, error) {
	sec, err := s.Secrets.Get(ctx, s.StateSecret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading state Secret %s: %w", s.StateSecret, err)
	}
	raw, ok := sec.Data[magosv1.StateKey]
	if !ok || len(raw) == 0 {
		return nil, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("state Secret %s: %w", s.StateSecret, err)
	}
	defer zr.Close()
	// Bounded like an upload: a small Secret can unpack to gigabytes.
	state, err := io.ReadAll(io.LimitReader(zr, MaxStateBytes+1))
	if err != nil {
		return nil, fmt.Errorf("state Secret %s: %w", s.StateSecret, err)
	}
	if len(state) > MaxStateBytes {
		return nil, fmt.Errorf("state Secret %s unpacks to more than %d bytes", s.StateSecret, MaxStateBytes)
	}
	return state, nil
}

// PutState stores state, gzip'd, in the existing state Secret.
func (s *Store) PutState(ctx context.Context, state []byte) error {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(state); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	err := retry(func() error { return s.putOnce(ctx, buf.Bytes()) })
	if err != nil {
		return fmt.Errorf("writing state Secret %s: %w", s.StateSecret, err)
	}
	return nil
}

func (s *Store) putOnce(ctx context.Context, gz []byte) error {
	sec, err := s.Secrets.Get(ctx, s.StateSecret, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ErrNotReserved
	}
	if err != nil {
		return err
	}
	if sec.Data == nil {
		sec.Data = map[string][]byte{}
	}
	if sec.Annotations == nil {
		sec.Annotations = map[string]string{}
	}
	sec.Annotations["encoding"] = "gzip"
	sec.Data[magosv1.StateKey] = gz
	_, err = s.Secrets.Update(ctx, sec, metav1.UpdateOptions{})
	return err
}

// DeleteState empties the state Secret; the Secret itself stays, as the
// runner could not create it again.
func (s *Store) DeleteState(ctx context.Context) error {
	err := retry(func() error {
		sec, err := s.Secrets.Get(ctx, s.StateSecret, metav1.GetOptions{})
		if err != nil {
			return err
		}
		delete(sec.Data, magosv1.StateKey)
		_, err = s.Secrets.Update(ctx, sec, metav1.UpdateOptions{})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the state in Secret %s: %w", s.StateSecret, err)
	}
	return nil
}

// Lock takes the lock for info (the engine's lock info JSON). Taking a lock
// already held with the same ID succeeds; one held with another ID returns
// a *LockedError.
func (s *Store) Lock(ctx context.Context, raw []byte) error {
	var info LockInfo
	if err := json.Unmarshal(raw, &info); err != nil || info.ID == "" {
		return fmt.Errorf("invalid lock info: %v", err)
	}
	return retry(func() error { return s.lockOnce(ctx, info.ID, raw) })
}

func (s *Store) lockOnce(ctx context.Context, id string, raw []byte) error {
	now := metav1.NowMicro()
	lease, err := s.readLock(ctx)
	if err != nil {
		return err
	}
	if lease == nil {
		return fmt.Errorf("lock Lease %s: %w", s.LockLease, ErrNotReserved)
	}
	if h := holderOf(lease); h != "" {
		if h == id {
			return nil
		}
		return lockedError(lease)
	}
	lease.Spec.HolderIdentity = &id
	lease.Spec.AcquireTime = &now
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[LockInfoAnnotation] = string(raw)
	_, err = s.Leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}

// Unlock releases the lock held with id. Releasing a free lock succeeds;
// releasing one held with another ID returns a *LockedError.
func (s *Store) Unlock(ctx context.Context, id string) error {
	return retry(func() error { return s.unlockOnce(ctx, id) })
}

func (s *Store) unlockOnce(ctx context.Context, id string) error {
	lease, err := s.readLock(ctx)
	if err != nil || lease == nil {
		return err
	}
	h := holderOf(lease)
	if h == "" {
		return nil
	}
	if h != id {
		return lockedError(lease)
	}
	lease.Spec.HolderIdentity = nil
	lease.Spec.AcquireTime = nil
	delete(lease.Annotations, LockInfoAnnotation)
	_, err = s.Leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}

// CheckLock returns nil when id may write the state: the lock is free or
// held with id. An empty id (a write without locking) is allowed only while
// the lock is free.
func (s *Store) CheckLock(ctx context.Context, id string) error {
	lease, err := s.readLock(ctx)
	if err != nil || lease == nil {
		return err
	}
	h := holderOf(lease)
	switch {
	case h == "":
		return nil
	case h == id:
		return nil
	case id != "":
		return fmt.Errorf("%w: %w", errMismatch, lockedError(lease))
	default:
		return lockedError(lease)
	}
}

// Holder returns who holds the lock, or "" when it is free.
func (s *Store) Holder(ctx context.Context) (string, error) {
	lease, err := s.readLock(ctx)
	if err != nil || lease == nil || holderOf(lease) == "" {
		return "", err
	}
	return lockedError(lease).Held.Holder(), nil
}

// readLock reads the lock Lease; a missing Lease is nil, not an error.
func (s *Store) readLock(ctx context.Context) (*coordinationv1.Lease, error) {
	lease, err := s.Leases.Get(ctx, s.LockLease, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading lock Lease %s: %w", s.LockLease, err)
	}
	return lease, nil
}

// retry calls f again while it loses an optimistic-concurrency race (a
// conflicting update), at most maxAttempts times.
func retry(f func() error) error {
	var err error
	for range maxAttempts {
		err = f()
		if !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}

func holderOf(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// lockedError describes the lock a held Lease records. A Lease taken by
// something other than an engine may lack the lock info; its holder
// identity then stands for the lock ID.
func lockedError(l *coordinationv1.Lease) *LockedError {
	raw := []byte(l.Annotations[LockInfoAnnotation])
	var info LockInfo
	if len(raw) == 0 || json.Unmarshal(raw, &info) != nil || info.ID != holderOf(l) {
		info = LockInfo{ID: holderOf(l), Who: holderOf(l)}
		if l.Spec.AcquireTime != nil {
			info.Created = l.Spec.AcquireTime.Time
		}
		raw, _ = json.Marshal(info)
	}
	return &LockedError{Held: info, Raw: raw}
}
