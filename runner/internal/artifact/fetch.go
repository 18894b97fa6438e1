package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/magos-dev/magos/apis/artifactdigest"
)

// ErrDigestMismatch means the downloaded bytes do not have the expected digest.
var ErrDigestMismatch = errors.New("artifact digest mismatch")

// Fetcher downloads artifacts.
type Fetcher struct {
	// Client is the HTTP client; nil means one with AttemptTimeout.
	Client *http.Client
	// Attempts is how many times a download is tried (transport errors,
	// 429 and 5xx answers are retried).
	Attempts int
	// Backoff is the wait before the second attempt; it doubles each time,
	// up to MaxBackoff when that is set.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// AttemptTimeout bounds one download attempt.
	AttemptTimeout time.Duration
	// MaxBytes is the largest artifact accepted.
	MaxBytes int64
	// Retrying, when set, is told of each failed attempt that is retried
	// and the wait before the next.
	Retrying func(err error, wait time.Duration)
	// TokenFile, when set, holds a bearer token sent with each attempt
	// (read again each time: the kubelet rotates projected tokens). The
	// artifact proxy authenticates runs by it.
	TokenFile string
}

// DefaultFetcher returns the runner's download settings: eight attempts
// over about 40 s. The artifact proxy is served by the workspace-controller
// behind a Service: while a replaced controller Pod is not yet Ready (a
// deleted or evicted Pod, a node drained) the Service has no endpoint and
// connections fail at once, so a run started then waits for it rather than
// failing.
func DefaultFetcher() *Fetcher {
	return &Fetcher{Attempts: 8, Backoff: time.Second, MaxBackoff: 8 * time.Second, AttemptTimeout: 5 * time.Minute, MaxBytes: DefaultLimits().MaxArchiveBytes}
}

// waits is the wait before each attempt after the first.
func (f *Fetcher) waits() []time.Duration {
	var waits []time.Duration
	wait := f.Backoff
	for attempt := 2; attempt <= max(f.Attempts, 1); attempt++ {
		if f.MaxBackoff > 0 {
			wait = min(wait, f.MaxBackoff)
		}
		waits = append(waits, wait)
		wait *= 2
	}
	return waits
}

// Fetch downloads rawURL into the file dst and checks that it has digest
// ("<algorithm>:<hex>", in any algorithm source-controller writes:
// artifactdigest). A mismatch is not retried and wraps ErrDigestMismatch.
func (f *Fetcher) Fetch(ctx context.Context, rawURL, digest, dst string) error {
	want, err := artifactdigest.Parse(digest)
	if err != nil {
		return err
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("artifact URL %q is not an http(s) URL", Redact(rawURL))
	}
	var lastErr error
	waits := f.waits()
	for attempt := 0; attempt <= len(waits); attempt++ {
		if attempt > 0 {
			if f.Retrying != nil {
				f.Retrying(lastErr, waits[attempt-1])
			}
			select {
			case <-ctx.Done():
				return errors.Join(lastErr, ctx.Err())
			case <-time.After(waits[attempt-1]):
			}
		}
		var retry bool
		var got artifactdigest.Digest
		got, retry, lastErr = f.download(ctx, u.String(), dst, want)
		if lastErr == nil {
			if got != want {
				return fmt.Errorf("%w: %s has %s, expected %s", ErrDigestMismatch, Redact(rawURL), got, digest)
			}
			return nil
		}
		if !retry {
			break
		}
	}
	return fmt.Errorf("fetching %s: %w", Redact(rawURL), lastErr)
}

// download makes one attempt. It returns the digest of what it wrote, in
// want's algorithm, and whether a failure is worth retrying.
func (f *Fetcher) download(ctx context.Context, u, dst string, want artifactdigest.Digest) (artifactdigest.Digest, bool, error) {
	timeout := f.AttemptTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return artifactdigest.Digest{}, false, err
	}
	if f.TokenFile != "" {
		token, err := os.ReadFile(f.TokenFile)
		if err != nil {
			return artifactdigest.Digest{}, false, fmt.Errorf("reading the artifact token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	}
	client := f.Client
	if client == nil {
		client = &http.Client{}
	}
	resp, err := client.Do(req)
	if err != nil {
		retry := ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded)
		var uerr *url.Error
		if errors.As(err, &uerr) {
			// Its message holds the whole URL, query included.
			err = fmt.Errorf("%s: %w", uerr.Op, uerr.Err)
		}
		return artifactdigest.Digest{}, retry, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		retry := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		return artifactdigest.Digest{}, retry, fmt.Errorf("HTTP %s", resp.Status)
	}
	if f.MaxBytes > 0 && resp.ContentLength > f.MaxBytes {
		return artifactdigest.Digest{}, false, fmt.Errorf("%w: artifact is %d bytes, more than the limit of %d", ErrRejected, resp.ContentLength, f.MaxBytes)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return artifactdigest.Digest{}, false, err
	}
	body := artifactdigest.NewReader(resp.Body, want, f.MaxBytes)
	_, err = io.Copy(out, body)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, artifactdigest.ErrTooLarge) {
		return artifactdigest.Digest{}, false, fmt.Errorf("%w: %w", ErrRejected, err)
	}
	if err != nil {
		return artifactdigest.Digest{}, true, fmt.Errorf("reading the artifact: %w", err)
	}
	return body.Sum(), false, nil
}

// Redact drops the user info and query of a URL, which may hold tokens, so
// that it can be logged and reported.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	return u.String()
}
