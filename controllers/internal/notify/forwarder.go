package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/magos-dev/magos/controllers/internal/metrics"
)

// Forwarder defaults.
const (
	DefaultQueueSize = 512
	DefaultAttempts  = 5
	DefaultBackoff   = time.Second
	DefaultTimeout   = 5 * time.Second
	// maxBackoff caps the wait between two attempts.
	maxBackoff = 30 * time.Second
)

// ForwarderOptions tune a Forwarder; zero values take the defaults.
type ForwarderOptions struct {
	// QueueSize is how many events wait to be posted; more are dropped.
	QueueSize int
	// Attempts is how often one event is posted before it is dropped.
	Attempts int
	// Backoff is the wait before the second attempt; it doubles after
	// each failed attempt, up to 30s.
	Backoff time.Duration
	// Timeout bounds one POST.
	Timeout time.Duration
}

// Forwarder posts events to the event receiver of Flux's
// notification-controller (its --events-addr). It is a manager.Runnable:
// one goroutine posts the queued events in order until the manager stops;
// events still queued then are dropped.
type Forwarder struct {
	addr     string
	client   *http.Client
	queue    chan eventv1.Event
	attempts int
	backoff  time.Duration
	log      logr.Logger
}

var _ manager.LeaderElectionRunnable = (*Forwarder)(nil)

// NewForwarder returns a Forwarder posting to addr, an http or https URL.
func NewForwarder(addr string, opts ForwarderOptions) (*Forwarder, error) {
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("events address: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("events address %q: want an http or https URL", addr)
	}
	return &Forwarder{
		addr:     addr,
		client:   &http.Client{Timeout: orDefault(opts.Timeout, DefaultTimeout)},
		queue:    make(chan eventv1.Event, orDefault(opts.QueueSize, DefaultQueueSize)),
		attempts: orDefault(opts.Attempts, DefaultAttempts),
		backoff:  orDefault(opts.Backoff, DefaultBackoff),
		log:      ctrl.Log.WithName("events"),
	}, nil
}

// Forward queues ev to be posted and returns at once. When the queue is
// full it drops ev, counts it as dropped and returns false.
func (f *Forwarder) Forward(ev eventv1.Event) bool {
	select {
	case f.queue <- ev:
		return true
	default:
		f.log.Info("Dropping event: the forward queue is full", eventKeys(ev)...)
		metrics.RecordEventForwarded(metrics.EventDropped)
		return false
	}
}

// NeedLeaderElection is false: events are posted wherever they are
// recorded, and only the leader's reconcilers record them.
func (f *Forwarder) NeedLeaderElection() bool { return false }

// Start posts queued events until ctx ends, counting each delivered or
// failed one in magos_events_forwarded_total; a post cut short by the end
// of ctx counts as neither.
func (f *Forwarder) Start(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-f.queue:
			err := f.post(ctx, ev)
			switch {
			case err == nil:
				metrics.RecordEventForwarded(metrics.EventDelivered)
			case ctx.Err() == nil:
				f.log.Error(err, "Unable to forward event", eventKeys(ev)...)
				metrics.RecordEventForwarded(metrics.EventFailed)
			}
		}
	}
}

// post posts ev, retrying with backoff while the receiver is unreachable
// or answers with a server error.
func (f *Forwarder) post(ctx context.Context, ev eventv1.Event) error {
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encoding the event: %w", err)
	}
	wait := f.backoff
	for attempt := 1; ; attempt++ {
		err := f.postOnce(ctx, body)
		var perm permanentError
		if err == nil || errors.As(err, &perm) || attempt >= f.attempts {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, maxBackoff)
	}
}

// postOnce posts body once. A 2xx answer, and 429 (the
// notification-controller's answer to a duplicate it rate-limits), are
// success; another 4xx is a permanentError.
func (f *Forwarder) postOnce(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.addr, bytes.NewReader(body))
	if err != nil {
		return permanentError{err}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	switch code := resp.StatusCode; {
	case code < 300 || code == http.StatusTooManyRequests:
		return nil
	case code < 500:
		return permanentError{fmt.Errorf("the event receiver refused the event: %s", resp.Status)}
	default:
		return fmt.Errorf("the event receiver failed: %s", resp.Status)
	}
}

// permanentError is a failure that another attempt would repeat.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// eventKeys are the log keys naming ev.
func eventKeys(ev eventv1.Event) []any {
	o := ev.InvolvedObject
	return []any{"kind", o.Kind, "namespace", o.Namespace, "name", o.Name, "reason", ev.Reason}
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
