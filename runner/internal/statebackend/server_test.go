package statebackend_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/magos-dev/magos/runner/internal/statebackend"
)

// client speaks the http backend protocol as the engine does.
type client struct {
	t   *testing.T
	srv *statebackend.Server
}

func (c client) do(method, path string, body []byte) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.srv.URL()+path, bytes.NewReader(body))
	require.NoError(c.t, err)
	req.SetBasicAuth("magos", c.srv.Password())
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return resp.StatusCode, string(b)
}

func lockInfo(id, who string) []byte {
	b, _ := json.Marshal(statebackend.LockInfo{ID: id, Who: who, Operation: "OperationTypePlan", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	return b
}

func TestServerStateAndLock(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	store, cs, ns := newStore(t)
	srv := startServer(t, store)
	c := client{t: t, srv: srv}

	_, seen := srv.State()
	assert.False(t, seen, "the engine has read no state yet")
	code, _ := c.do(http.MethodGet, "/state", nil)
	assert.Equal(t, http.StatusNotFound, code, "no state yet")
	got, seen := srv.State()
	assert.True(t, seen)
	assert.Nil(t, got, "the engine read that there is no state")

	// The first lock takes the free Lease the controller created.
	code, _ = c.do("LOCK", "/lock", lockInfo("lock-a", "runner-a@pod-a"))
	require.Equal(t, http.StatusOK, code)
	lease, err := cs.CoordinationV1().Leases(ns).Get(ctx, store.LockLease, metav1.GetOptions{})
	require.NoError(t, err)
	require.NotNil(t, lease.Spec.HolderIdentity)
	assert.Equal(t, "lock-a", *lease.Spec.HolderIdentity)
	assert.Contains(t, lease.Annotations[statebackend.LockInfoAnnotation], `"Who":"runner-a@pod-a"`)

	// Taking it again with the same ID is fine; another ID is refused with
	// the holder's lock info.
	code, _ = c.do("LOCK", "/lock", lockInfo("lock-a", "runner-a@pod-a"))
	assert.Equal(t, http.StatusOK, code)
	_, hadConflict := srv.LockConflict()
	assert.False(t, hadConflict)
	code, body := c.do("LOCK", "/lock", lockInfo("lock-b", "runner-b@pod-b"))
	assert.Equal(t, http.StatusLocked, code)
	assert.Contains(t, body, `"ID":"lock-a"`)
	held, hadConflict := srv.LockConflict()
	require.True(t, hadConflict)
	assert.Equal(t, "runner-a@pod-a (lock ID lock-a, OperationTypePlan, since 2026-01-02T03:04:05Z)", held.Holder())

	// Writes must come with the holder's ID.
	state := []byte(`{"version":4,"serial":1,"lineage":"x"}`)
	code, _ = c.do(http.MethodPost, "/state?ID=lock-b", state)
	assert.Equal(t, http.StatusConflict, code)
	code, _ = c.do(http.MethodPost, "/state", state)
	assert.Equal(t, http.StatusLocked, code)
	got, _ = srv.State()
	assert.Nil(t, got, "a refused write is not the state")
	code, _ = c.do(http.MethodPost, "/state?ID=lock-a", state)
	require.Equal(t, http.StatusOK, code)
	got, _ = srv.State()
	assert.Equal(t, state, got, "the state the engine wrote")

	// The state is stored gzip'd under "tfstate", as the kubernetes backend does.
	sec, err := cs.CoreV1().Secrets(ns).Get(ctx, store.StateSecret, metav1.GetOptions{})
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(sec.Data["tfstate"]))
	require.NoError(t, err)
	stored, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, state, stored)
	assert.Equal(t, "gzip", sec.Annotations["encoding"])
	code, body = c.do(http.MethodGet, "/state", nil)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, string(state), body)

	// Only the holder unlocks.
	code, _ = c.do("UNLOCK", "/lock", lockInfo("lock-b", "runner-b@pod-b"))
	assert.Equal(t, http.StatusLocked, code)
	code, _ = c.do("UNLOCK", "/lock", lockInfo("lock-a", "runner-a@pod-a"))
	assert.Equal(t, http.StatusOK, code)
	lease, err = cs.CoordinationV1().Leases(ns).Get(ctx, store.LockLease, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Nil(t, lease.Spec.HolderIdentity)
	assert.NotContains(t, lease.Annotations, statebackend.LockInfoAnnotation)

	// A freed lock can be taken by the next run.
	code, _ = c.do("LOCK", "/lock", lockInfo("lock-b", "runner-b@pod-b"))
	assert.Equal(t, http.StatusOK, code)
}

// TestServerHoldsTheLockForTheRun: with HoldLock the Lease is taken at
// the engine's first lock and released at Close, whatever the engine locks
// and unlocks in between; writes with the engine's later lock IDs pass, and
// no other run takes the lock between the engine's commands.
func TestServerHoldsTheLockForTheRun(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	store, cs, ns := newStore(t)
	srv := startServer(t, store)
	srv.HoldLock()
	c := client{t: t, srv: srv}
	holder := func() string {
		t.Helper()
		lease, err := cs.CoordinationV1().Leases(ns).Get(ctx, store.LockLease, metav1.GetOptions{})
		require.NoError(t, err)
		if lease.Spec.HolderIdentity == nil {
			return ""
		}
		return *lease.Spec.HolderIdentity
	}
	leaseVersion := func() string {
		t.Helper()
		lease, err := cs.CoordinationV1().Leases(ns).Get(ctx, store.LockLease, metav1.GetOptions{})
		require.NoError(t, err)
		return lease.ResourceVersion
	}

	code, _ := c.do("LOCK", "/lock", lockInfo("plan-lock", "runner@pod"))
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "plan-lock", holder())
	taken := leaseVersion()
	code, _ = c.do("UNLOCK", "/lock", lockInfo("plan-lock", "runner@pod"))
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "plan-lock", holder(), "kept between the engine's commands")

	other := *store
	otherSrv := startServer(t, &other)
	code, _ = client{t: t, srv: otherSrv}.do("LOCK", "/lock", lockInfo("intruder", "runner-b@pod-b"))
	assert.Equal(t, http.StatusLocked, code, "another run cannot take the lock between the commands")

	code, _ = c.do("LOCK", "/lock", lockInfo("apply-lock", "runner@pod"))
	require.Equal(t, http.StatusOK, code)
	state := []byte(`{"version":4,"serial":1,"lineage":"x"}`)
	code, _ = c.do(http.MethodPost, "/state?ID=apply-lock", state)
	require.Equal(t, http.StatusOK, code, "the engine's apply lock may write the state")
	code, _ = c.do(http.MethodPost, "/state?ID=intruder", state)
	assert.Equal(t, http.StatusConflict, code)
	code, _ = c.do("UNLOCK", "/lock", lockInfo("apply-lock", "runner@pod"))
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, taken, leaseVersion(), "the Lease was written once to take it, not per command")

	require.NoError(t, srv.Close())
	assert.Empty(t, holder(), "released when the run ends")
}

func TestServerReportsForeignLeaseHolders(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	store, _, _ := newStore(t)
	srv := startServer(t, store)
	// A Lease held by something that wrote no lock info.
	require.NoError(t, store.Lock(ctx, lockInfo("first", "someone")))
	holder, err := store.Holder(ctx)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(holder, "someone (lock ID first"), holder)

	code, body := client{t: t, srv: srv}.do("LOCK", "/lock", lockInfo("second", "me"))
	assert.Equal(t, http.StatusLocked, code)
	assert.Contains(t, body, `"ID":"first"`)
}

func TestServerRequiresThePassword(t *testing.T) {
	env.Require(t)
	store, _, _ := newStore(t)
	srv := startServer(t, store)
	for _, auth := range []func(*http.Request){
		func(*http.Request) {},
		func(r *http.Request) { r.SetBasicAuth("magos", "wrong") },
	} {
		req, err := http.NewRequest(http.MethodGet, srv.URL()+"/state", nil)
		require.NoError(t, err)
		auth(req)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	}
	assert.Equal(t, srv.Password(), srv.Env()["TF_HTTP_PASSWORD"])
	assert.True(t, strings.HasPrefix(srv.Env()["TF_HTTP_ADDRESS"], "http://127.0.0.1:"))
}

// The runner may not create Secrets or Leases: without the state Secret and
// lock Lease the controller creates, it fails and says why.
func TestServerNeedsTheReservedSecretAndLease(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	store, _, _ := newUnreservedStore(t)
	srv := startServer(t, store)
	c := client{t: t, srv: srv}

	code, _ := c.do(http.MethodGet, "/state", nil)
	assert.Equal(t, http.StatusNotFound, code, "no state yet")
	err := store.Lock(ctx, lockInfo("lock-a", "runner-a@pod-a"))
	require.ErrorIs(t, err, statebackend.ErrNotReserved)
	assert.Contains(t, err.Error(), "lock Lease "+store.LockLease)
	err = store.PutState(ctx, []byte(`{"version":4}`))
	require.ErrorIs(t, err, statebackend.ErrNotReserved)
	assert.Contains(t, err.Error(), "state Secret "+store.StateSecret)
}

func TestUserBackendValuesAreTheAttributeStrings(t *testing.T) {
	file := filepath.Join(t.TempDir(), "backend.tf")
	require.NoError(t, os.WriteFile(file, []byte(`# a comment with "quotes"
backend "s3" {
  bucket     = "state-bucket"
  access_key = "AKIA-EXAMPLE"
  secret_key = "se\"cret\\key" // trailing "comment"
  /* block "comment" */
  endpoints  = { s3 = "https://s3.example" }
  list       = ["one", "two"]
}
`), 0o600))
	got, err := statebackend.UserBackendValues(file)
	require.NoError(t, err)
	assert.Equal(t, []string{"state-bucket", "AKIA-EXAMPLE", `se"cret\key`, "https://s3.example", "one", "two"}, got)
}
