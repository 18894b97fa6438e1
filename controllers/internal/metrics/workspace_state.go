package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	workspaceDrifted = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "magos_workspace_drifted",
		Help: "1 while the Workspace's Drifted condition is True; no series otherwise.",
	}, []string{"namespace", "name"})

	workspaceLastApplied = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "magos_workspace_last_applied_timestamp_seconds",
		Help: "Unix time of the Workspace's last successful apply.",
	}, []string{"namespace", "name"})

	workspaceAwaitingSince = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "magos_workspace_awaiting_since_timestamp_seconds",
		Help: "Unix time since when the Workspace's current plan has waited, by reason (AwaitingApproval, AwaitingPromotion); no series when it does not wait.",
	}, []string{"namespace", "name", "reason"})

	workspaceStateLockHeld = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "magos_workspace_state_lock_held",
		Help: "1 while the Workspace's state lock is held by a run that is gone; no series otherwise.",
	}, []string{"namespace", "name"})

	drifted       = newObjectSeries(workspaceDrifted)
	lastApplied   = newObjectSeries(workspaceLastApplied)
	awaitingSince = newObjectSeries(workspaceAwaitingSince)
	lockHeld      = newObjectSeries(workspaceStateLockHeld)
)

func init() {
	ctrlmetrics.Registry.MustRegister(workspaceDrifted, workspaceLastApplied, workspaceAwaitingSince, workspaceStateLockHeld)
}

// WorkspaceState is what the per-Workspace series say of one Workspace.
// The zero value has no series.
type WorkspaceState struct {
	// Drifted: the Drifted condition is True.
	Drifted bool
	// LastApplied is when the last successful apply finished; zero if none.
	LastApplied time.Time
	// Awaiting is AwaitingApproval or AwaitingPromotion while the current
	// plan waits, since AwaitingSince; "" when it does not wait.
	Awaiting      string
	AwaitingSince time.Time
	// LockHeld: the state lock is held by a run that is gone (status.lock
	// is set).
	LockHeld bool
}

// TrackWorkspaceState sets the per-Workspace series of namespace/name to
// s; a deleted Workspace is tracked with the zero WorkspaceState.
func TrackWorkspaceState(namespace, name string, s WorkspaceState) {
	key := namespace + "/" + name
	if s.Drifted {
		drifted.set(key, 1, namespace, name)
	} else {
		drifted.forget(key)
	}
	if s.LockHeld {
		lockHeld.set(key, 1, namespace, name)
	} else {
		lockHeld.forget(key)
	}
	if !s.LastApplied.IsZero() {
		lastApplied.set(key, unixSeconds(s.LastApplied), namespace, name)
	} else {
		lastApplied.forget(key)
	}
	if s.Awaiting != "" && !s.AwaitingSince.IsZero() {
		awaitingSince.set(key, unixSeconds(s.AwaitingSince), namespace, name, s.Awaiting)
	} else {
		awaitingSince.forget(key)
	}
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
