package notify_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/notify"
)

// receiver is a stand-in for the notification-controller's event
// receiver: it answers each POST with the next status of answers (then
// 202) and keeps what it accepted.
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	answers  []int
	posts    int
	accepted []eventv1.Event
	headers  []http.Header
}

func newReceiver(t *testing.T, answers ...int) *receiver {
	t.Helper()
	r := &receiver{answers: answers}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.posts++
		code := http.StatusAccepted
		if len(r.answers) > 0 {
			code, r.answers = r.answers[0], r.answers[1:]
		}
		if code < 300 {
			var ev eventv1.Event
			if err := json.NewDecoder(req.Body).Decode(&ev); err != nil {
				code = http.StatusBadRequest
			} else {
				r.accepted = append(r.accepted, ev)
				r.headers = append(r.headers, req.Header.Clone())
			}
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) state() (posts int, accepted []eventv1.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.posts, append([]eventv1.Event(nil), r.accepted...)
}

// startForwarder runs a Forwarder to addr until the test ends.
func startForwarder(t *testing.T, addr string, opts notify.ForwarderOptions) *notify.Forwarder {
	t.Helper()
	fwd, err := notify.NewForwarder(addr, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = fwd.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return fwd
}

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, magosv1.AddToScheme(s))
	return s
}

func workspace() *magosv1.Workspace {
	return &magosv1.Workspace{ObjectMeta: metav1.ObjectMeta{
		Namespace: "team-a", Name: "network", UID: "uid-1",
		Annotations: map[string]string{
			"event.toolkit.fluxcd.io/cluster": "prod-eu",
			"example.com/owner":               "not forwarded",
		},
	}}
}

func TestRecorderForwardsFluxEventsWithMetadata(t *testing.T) {
	rcv := newReceiver(t)
	fwd := startForwarder(t, rcv.URL, notify.ForwarderOptions{})
	kube := events.NewFakeRecorder(10)
	rec := notify.NewRecorder(kube, fwd, scheme(t), "workspace-controller")

	rec.AnnotatedEventf(workspace(), nil, notify.Meta(notify.RevisionKey, "main@sha1:abc", notify.PlanIDKey, "p-7"),
		corev1.EventTypeWarning, "RunFailed", "RunFailed", "The apply run %s failed", "network-apply-3")
	rec.Eventf(workspace(), nil, corev1.EventTypeNormal, "Applied", "Applied", "Applied plan %s", "p-7")

	require.Eventually(t, func() bool { _, got := rcv.state(); return len(got) == 2 }, 5*time.Second, 10*time.Millisecond)
	_, got := rcv.state()
	failed := got[0]
	assert.Equal(t, corev1.ObjectReference{
		APIVersion: "magos.dev/v1alpha1", Kind: "Workspace", Namespace: "team-a", Name: "network", UID: "uid-1",
	}, failed.InvolvedObject)
	assert.Equal(t, eventv1.EventSeverityError, failed.Severity)
	assert.Equal(t, "RunFailed", failed.Reason)
	assert.Equal(t, "The apply run network-apply-3 failed", failed.Message)
	assert.Equal(t, map[string]string{
		"magos.dev/revision":              "main@sha1:abc",
		"magos.dev/planID":                "p-7",
		"event.toolkit.fluxcd.io/cluster": "prod-eu",
	}, failed.Metadata, "the given metadata and the object's Flux event annotations, nothing else")
	assert.Equal(t, "workspace-controller", failed.ReportingController)
	assert.NotEmpty(t, failed.ReportingInstance)
	assert.WithinDuration(t, time.Now(), failed.Timestamp.Time, time.Minute)
	assert.Equal(t, "application/json", rcv.headers[0].Get("Content-Type"))

	applied := got[1]
	assert.Equal(t, eventv1.EventSeverityInfo, applied.Severity)
	assert.Equal(t, map[string]string{"event.toolkit.fluxcd.io/cluster": "prod-eu"}, applied.Metadata)

	require.Len(t, kube.Events, 2, "every event is also a Kubernetes event")
	assert.Equal(t, "Warning RunFailed The apply run network-apply-3 failed", <-kube.Events)
	assert.Equal(t, "Normal Applied Applied plan p-7", <-kube.Events)
}

// forwarded is magos_events_forwarded_total{result} as the metrics
// endpoint serves it.
func forwarded(t *testing.T, result string) float64 {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	require.NoError(t, err)
	for _, mf := range families {
		if mf.GetName() != "magos_events_forwarded_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == result {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("magos_events_forwarded_total{result=%q} is not served", result)
	return 0
}

func TestForwarderRetriesServerErrorsOnly(t *testing.T) {
	fast := notify.ForwarderOptions{Attempts: 3, Backoff: time.Millisecond}
	for _, tc := range []struct {
		name      string
		answers   []int
		posts     int
		delivered bool
		// counted is the result the first event is counted with.
		counted string
	}{
		{"a server error is retried", []int{503, 500}, 3, true, metrics.EventDelivered},
		{"it gives up after the attempts", []int{503, 503, 503}, 3, false, metrics.EventFailed},
		{"a refusal is not retried", []int{400}, 1, false, metrics.EventFailed},
		{"a rate-limited duplicate is done", []int{429}, 1, false, metrics.EventDelivered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			delivered, failed := forwarded(t, metrics.EventDelivered), forwarded(t, metrics.EventFailed)
			rcv := newReceiver(t, tc.answers...)
			fwd := startForwarder(t, rcv.URL, fast)
			rec := notify.NewRecorder(nil, fwd, scheme(t), "workspace-controller")
			rec.Eventf(workspace(), nil, corev1.EventTypeNormal, "First", "First", "first")
			// A second event shows the first is finished with: events are posted in order.
			rec.Eventf(workspace(), nil, corev1.EventTypeNormal, "Second", "Second", "second")

			require.Eventually(t, func() bool {
				_, got := rcv.state()
				return len(got) > 0 && got[len(got)-1].Reason == "Second"
			}, 5*time.Second, 10*time.Millisecond)
			posts, got := rcv.state()
			assert.Equal(t, tc.posts+1, posts, "posts of the first event, then the second")
			assert.Equal(t, tc.delivered, len(got) == 2 && got[0].Reason == "First")

			// The second event is counted once its post returns.
			require.Eventually(t, func() bool {
				return forwarded(t, metrics.EventDelivered)+forwarded(t, metrics.EventFailed)-delivered-failed == 2
			}, 5*time.Second, 10*time.Millisecond, "both events are counted")
			want := map[string]float64{metrics.EventDelivered: 1, metrics.EventFailed: 0}
			want[tc.counted]++
			assert.Equal(t, want[metrics.EventDelivered], forwarded(t, metrics.EventDelivered)-delivered, "delivered")
			assert.Equal(t, want[metrics.EventFailed], forwarded(t, metrics.EventFailed)-failed, "failed")
		})
	}
}

func TestForwardNeverBlocks(t *testing.T) {
	hold := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hold }))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(hold) })
	fwd := startForwarder(t, slow.URL, notify.ForwarderOptions{QueueSize: 2, Timeout: time.Minute})
	rec := notify.NewRecorder(nil, fwd, scheme(t), "workspace-controller")
	dropped := forwarded(t, metrics.EventDropped)

	start := time.Now()
	for range 50 {
		rec.Eventf(workspace(), nil, corev1.EventTypeWarning, "RunFailed", "RunFailed", "failed")
	}
	assert.Less(t, time.Since(start), time.Second, "a stuck receiver does not slow the recorder")
	assert.False(t, fwd.Forward(eventv1.Event{Reason: "Extra"}), "a full queue drops the event")
	// Of the 51 events, 2 wait in the queue and at most one is being
	// posted: every other one is counted as dropped.
	n := forwarded(t, metrics.EventDropped) - dropped
	assert.True(t, n == 48 || n == 49, "dropped events counted: %v", n)
}

func TestNewForwarderWantsAnHTTPURL(t *testing.T) {
	for _, addr := range []string{"notification-controller:80", "ftp://host/", "http://", "://x"} {
		_, err := notify.NewForwarder(addr, notify.ForwarderOptions{})
		assert.Error(t, err, addr)
	}
	_, err := notify.NewForwarder("http://notification-controller.flux-system.svc.cluster.local./", notify.ForwarderOptions{})
	assert.NoError(t, err)
}

func TestEventfFallsBackToAPlainRecorder(t *testing.T) {
	kube := events.NewFakeRecorder(1)
	notify.Eventf(kube, workspace(), nil, notify.Meta(notify.PlanIDKey, "p-1"), corev1.EventTypeNormal, "Planned", "Planned", "Plan %s", "p-1")
	require.Len(t, kube.Events, 1)
	assert.Equal(t, "Normal Planned Plan p-1", <-kube.Events)
	notify.Eventf(nil, workspace(), nil, nil, corev1.EventTypeNormal, "Planned", "Planned", "nothing records it")
}

func TestMetaLeavesOutEmptyValues(t *testing.T) {
	assert.Nil(t, notify.Meta(notify.RevisionKey, "", notify.PlanIDKey, ""))
	assert.Equal(t, map[string]string{"magos.dev/revision": "r1"}, notify.Meta(notify.RevisionKey, "r1", notify.PlanIDKey, ""))
}
