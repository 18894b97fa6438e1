package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/notify"
)

// eventReceiver plays the event receiver of Flux's notification-controller
// on loopback: it keeps every event posted to it.
type eventReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	events []eventv1.Event
}

func newEventReceiver(t *testing.T) *eventReceiver {
	t.Helper()
	r := &eventReceiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var ev eventv1.Event
		if req.Method != http.MethodPost || json.NewDecoder(req.Body).Decode(&ev) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.events = append(r.events, ev)
		r.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(r.Close)
	return r
}

// waitEvent waits for an event about kind/name with reason.
func (r *eventReceiver) waitEvent(t *testing.T, kind, name, reason string, timeout time.Duration) eventv1.Event {
	t.Helper()
	var found eventv1.Event
	require.Eventually(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, ev := range r.events {
			if o := ev.InvolvedObject; o.Kind == kind && o.Name == name && ev.Reason == reason {
				found = ev
				return true
			}
		}
		return false
	}, timeout, 100*time.Millisecond, "no %s event for %s %s reached the receiver", reason, kind, name)
	return found
}

func TestEventsAreForwardedToFluxNotificationController(t *testing.T) {
	env.Require(t)
	rcv := newEventReceiver(t)
	f := newRolloutFixtureWith(t, 1, []magosv1.Stage{{Name: "dev", Selector: envSelector("dev")}}, nil, stackOptions{EventsAddr: rcv.URL})
	ro := f.waitRollout(3*time.Minute, "rolled out", func(ro *magosv1.Rollout) bool {
		return ro.Status.Revision != "" && rolledOut(ro.Status.Revision)(ro)
	})

	t.Run("a Rollout stage transition", func(t *testing.T) {
		ev := rcv.waitEvent(t, magosv1.RolloutKind, "release", "Stage"+string(magosv1.StageSucceeded), 30*time.Second)
		assert.Equal(t, magosv1.GroupVersion.String(), ev.InvolvedObject.APIVersion)
		assert.Equal(t, f.ns, ev.InvolvedObject.Namespace)
		assert.Equal(t, eventv1.EventSeverityInfo, ev.Severity)
		assert.Equal(t, "rollout-controller", ev.ReportingController)
		assert.Equal(t, ro.Status.Revision, ev.Metadata[notify.RevisionKey])
		assert.Equal(t, "dev", ev.Metadata[notify.StageKey])
	})

	t.Run("a failed plan", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "main.tf"),
			[]byte("resource \"terraform_data\" \"broken\" {\n  input = var.undeclared\n}\n"), 0o644))
		rev := f.gitRepository("broken", dir)
		f.newWorkspace("broken", "broken", nil)
		ws := f.waitWorkspace("broken", 3*time.Minute, "its plan failed", func(ws *magosv1.Workspace) bool {
			last := ws.Status.LastRun()
			return last != nil && magosv1.RunPlans(last.Phase) && last.Result == magosv1.ResultFailed
		})
		run := ws.Status.LastRun()
		require.NotEmpty(t, run.PlanID)

		ev := rcv.waitEvent(t, magosv1.WorkspaceKind, "broken", magosv1.ReasonRunFailed, 30*time.Second)
		assert.Equal(t, magosv1.GroupVersion.String(), ev.InvolvedObject.APIVersion)
		assert.Equal(t, eventv1.EventSeverityError, ev.Severity)
		assert.Equal(t, "workspace-controller", ev.ReportingController)
		assert.Contains(t, ev.Message, run.Job)
		assert.Equal(t, rev, ev.Metadata[notify.RevisionKey])
		assert.Equal(t, run.PlanID, ev.Metadata[notify.PlanIDKey])
	})
}
