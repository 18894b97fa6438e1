package artifact

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func testFetcher() *Fetcher {
	return &Fetcher{Attempts: 3, Backoff: time.Millisecond, AttemptTimeout: 10 * time.Second, MaxBytes: 1 << 20}
}

func TestFetchAndExtract(t *testing.T) {
	data := archive(t, file("main.tf", "# config"))
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The first attempt fails with a retryable answer.
		if calls.Add(1) == 1 {
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write(data)
	}))
	defer srv.Close()

	root := filepath.Join(t.TempDir(), "src")
	require.NoError(t, FetchAndExtract(context.Background(), testFetcher(), srv.URL+"/a.tar.gz?token=x", digestOf(data), root, DefaultLimits()))
	assert.Equal(t, int32(2), calls.Load())
	b, err := os.ReadFile(filepath.Join(root, "main.tf"))
	require.NoError(t, err)
	assert.Equal(t, "# config", string(b))
	_, err = os.Stat(root + ".tar.gz")
	assert.True(t, os.IsNotExist(err), "the downloaded archive is removed")
}

func TestFetchRefuses(t *testing.T) {
	data := archive(t, file("main.tf", "# config"))
	big := make([]byte, 2<<20)
	tests := []struct {
		name      string
		body      []byte
		status    int
		digest    string
		wantIs    error
		wantErr   string
		wantCalls int32
	}{
		{name: "digest mismatch", body: data, digest: digestOf([]byte("other")), wantIs: ErrDigestMismatch, wantErr: "expected sha256:", wantCalls: 1},
		{name: "not found is not retried", status: http.StatusNotFound, digest: digestOf(data), wantErr: "404", wantCalls: 1},
		{name: "server errors are retried", status: http.StatusInternalServerError, digest: digestOf(data), wantErr: "500", wantCalls: 3},
		{name: "too large", body: big, digest: digestOf(big), wantIs: ErrRejected, wantErr: "limit", wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				if tt.status != 0 {
					http.Error(w, "no", tt.status)
					return
				}
				_, _ = w.Write(tt.body)
			}))
			defer srv.Close()
			err := testFetcher().Fetch(context.Background(), srv.URL+"/a.tar.gz?token=secret-token", tt.digest, filepath.Join(t.TempDir(), "a.tar.gz"))
			require.Error(t, err)
			if tt.wantIs != nil {
				assert.ErrorIs(t, err, tt.wantIs)
			}
			assert.ErrorContains(t, err, tt.wantErr)
			assert.NotContains(t, err.Error(), "secret-token", "URL queries are not reported")
			assert.Equal(t, tt.wantCalls, calls.Load())
		})
	}
}

func TestFetchRejectsBadInput(t *testing.T) {
	f := testFetcher()
	dst := filepath.Join(t.TempDir(), "a")
	assert.ErrorContains(t, f.Fetch(context.Background(), "file:///etc/passwd", digestOf(nil), dst), "not an http(s) URL")
	assert.ErrorContains(t, f.Fetch(context.Background(), "http://127.0.0.1/", "md5:abc", dst), "unsupported digest")
}

// TestFetchSendsTheTokenOfEachAttempt: with a TokenFile, every attempt
// carries the file's current token (the kubelet rotates it), and a refusal
// is not retried.
func TestFetchSendsTheTokenOfEachAttempt(t *testing.T) {
	data := archive(t, file("main.tf", "# config"))
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("first\n"), 0o600))
	var seen []string
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		if calls++; calls == 1 {
			require.NoError(t, os.WriteFile(tokenFile, []byte("second"), 0o600))
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		if r.Header.Get("Authorization") != "Bearer second" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		_, _ = w.Write(data)
	}))
	defer srv.Close()

	f := testFetcher()
	f.TokenFile = tokenFile
	require.NoError(t, f.Fetch(context.Background(), srv.URL, digestOf(data), filepath.Join(t.TempDir(), "a.tar.gz")))
	assert.Equal(t, []string{"Bearer first", "Bearer second"}, seen)

	require.NoError(t, os.WriteFile(tokenFile, []byte("stolen"), 0o600))
	seen = nil
	err := f.Fetch(context.Background(), srv.URL, digestOf(data), filepath.Join(t.TempDir(), "b.tar.gz"))
	require.ErrorContains(t, err, "403")
	assert.Len(t, seen, 1, "a refusal is not retried")
}

// unreachableFor is a transport that fails as a Service without a ready
// endpoint does (kube-proxy rejects the connection) for its first n
// requests, then passes them to next.
type unreachableFor struct {
	n     int32
	calls atomic.Int32
	next  http.RoundTripper
}

func (u *unreachableFor) RoundTrip(r *http.Request) (*http.Response, error) {
	if u.calls.Add(1) <= u.n {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ENETUNREACH}
	}
	return u.next.RoundTrip(r)
}

// TestFetchWaitsForTheArtifactProxy: connections that fail (the artifact
// proxy's Service without an endpoint while a replaced controller Pod
// starts) are retried; a run fails only when they outlast every attempt.
func TestFetchWaitsForTheArtifactProxy(t *testing.T) {
	data := archive(t, file("main.tf", "# config"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data) }))
	defer srv.Close()

	f := testFetcher()
	f.Attempts = 5
	var retried []string
	f.Retrying = func(err error, _ time.Duration) { retried = append(retried, err.Error()) }
	transport := &unreachableFor{n: 4, next: http.DefaultTransport}
	f.Client = &http.Client{Transport: transport}
	require.NoError(t, f.Fetch(context.Background(), srv.URL+"/a?token=secret-token", digestOf(data), filepath.Join(t.TempDir(), "a.tar.gz")))
	assert.Equal(t, int32(5), transport.calls.Load(), "four refused connections, then the download")
	require.Len(t, retried, 4, "each retried attempt is told")
	for _, msg := range retried {
		assert.Contains(t, msg, "network is unreachable")
		assert.NotContains(t, msg, "secret-token", "URL queries are not reported")
	}

	transport = &unreachableFor{n: 5, next: http.DefaultTransport}
	f.Client = &http.Client{Transport: transport}
	err := f.Fetch(context.Background(), srv.URL+"/a?token=secret-token", digestOf(data), filepath.Join(t.TempDir(), "b.tar.gz"))
	assert.ErrorIs(t, err, syscall.ENETUNREACH)
	assert.NotContains(t, err.Error(), "secret-token", "URL queries are not reported")
	assert.Equal(t, int32(5), transport.calls.Load())
}

// TestDefaultFetcherOutlastsAControllerRestart: the runner's retries span
// the time a replaced workspace-controller Pod takes to become Ready and
// its artifact proxy reachable (half a minute on a loaded node), each
// wait capped.
func TestDefaultFetcherOutlastsAControllerRestart(t *testing.T) {
	f := DefaultFetcher()
	var total time.Duration
	for _, w := range f.waits() {
		assert.LessOrEqual(t, w, f.MaxBackoff)
		total += w
	}
	assert.GreaterOrEqual(t, total, 30*time.Second)
	assert.Equal(t, []time.Duration{time.Millisecond, 2 * time.Millisecond}, testFetcher().waits(), "without a cap the wait doubles")
}
