package decide

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// StatusOnly reports whether decision d's action only changes status (the
// shell's part, if any, is done first: ActReleaseLock deletes the Lease).
func StatusOnly(d Decision) bool {
	switch d.Action {
	case ActRecordNoChanges, ActCarryRevision, ActReleaseLock, ActClearErroredState:
		return true
	}
	return false
}

// ApplyStatusOnly carries out a decision that only changes status
// (StatusOnly) on st, and returns the facts derived again from the new
// status, to decide again on, and the events to record.
//
//   - ActRecordNoChanges: a plan without changes is recorded as applied.
//   - ActCarryRevision: the plan stands for the new revision (Carry).
//   - ActReleaseLock: the lock, the plan and the retry state are cleared,
//     so the Workspace plans afresh.
//   - ActClearErroredState: the restored state, the plan and the retry
//     state are cleared; it plans again.
func ApplyStatusOnly(st *magosv1.WorkspaceStatus, f Facts, d Decision) (Facts, []Note) {
	var notes []Note
	switch d.Action {
	case ActRecordNoChanges:
		plan := st.Plan
		st.LastApplied = &magosv1.AppliedStatus{PlanID: plan.ID, Revision: plan.Revision, Time: metav1.NewTime(f.Now)}
		notes = append(notes, Note{Normal, magosv1.ReasonNoChanges,
			fmt.Sprintf("Plan %s of revision %s has no changes; nothing to apply", plan.ID, plan.Revision)})
	case ActCarryRevision:
		notes = append(notes, Note{Normal, magosv1.ReasonRevisionUnchanged, d.Message})
		Carry(st, f.Revision)
	case ActReleaseLock:
		notes = append(notes, Note{Normal, magosv1.ReasonUnlocked, fmt.Sprintf("Released the state lock held by %q", st.Lock.Holder)})
		st.Lock, st.Plan, st.Retry = nil, nil, nil
		f.Unlock = nil
	case ActClearErroredState:
		notes = append(notes, Note{Normal, magosv1.ReasonStateRestored,
			fmt.Sprintf("The state of run %s was marked restored; planning again", st.ErroredState.Job)})
		st.ErroredState, st.Plan, st.Retry = nil, nil, nil
		f.StateRestored = false
	}
	f.Plan, f.Applied, f.Lock, f.Retry, f.ErroredState = st.Plan, st.LastApplied, st.Lock, st.Retry, st.ErroredState
	return f, notes
}

// HandleRequest records the reconcile request (the value of the
// reconcile.fluxcd.io/requestedAt annotation) as handled.
func HandleRequest(st *magosv1.WorkspaceStatus, requestedAt string) {
	st.LastHandledReconcileAt = requestedAt
}

// Observe records in status what a reconcile read before deciding: the
// digest of the inputs, and the source artifact (nil: none yet).
func Observe(st *magosv1.WorkspaceStatus, inputs string, source *magosv1.SourceStatus) {
	st.InputsDigest = inputs
	if source != nil {
		st.Source = source
	}
}

// StartCaps are the cluster's bounds a started run was held to: the
// interval and timeout the Workspace asked for (zero: within the bounds)
// and what it got.
type StartCaps struct {
	AskedInterval, Interval time.Duration
	AskedTimeout, Timeout   time.Duration
}

// Started records run number n, whose Job is run, as the current run,
// with a Warning for each bound of the cluster the Workspace asked past.
// No event for the start itself: one event per outcome (Planned, Applied,
// RunFailed, ...) names the run; status and the Job say it runs.
func Started(st *magosv1.WorkspaceStatus, n int64, run *magosv1.RunStatus, caps StartCaps) []Note {
	st.Runs, st.CurrentRun = n, run
	var notes []Note
	if caps.AskedInterval > 0 {
		notes = append(notes, Note{Warning, magosv1.ReasonIntervalRaised, fmt.Sprintf(
			"spec.interval %s is shorter than this cluster's minimum: drift re-plans come every %s (--min-interval)", caps.AskedInterval, caps.Interval)})
	}
	if caps.AskedTimeout > 0 {
		notes = append(notes, Note{Warning, magosv1.ReasonRunTimeoutCapped, fmt.Sprintf(
			"%s: run %s has a deadline of %s", TimeoutCappedMessage(caps.AskedTimeout, caps.Timeout), run.Job, caps.Timeout)})
	}
	return notes
}

// RecordDependencies records the states of the Workspaces it depends on
// (nil: none).
func RecordDependencies(st *magosv1.WorkspaceStatus, states []magosv1.DependencyStatus) {
	st.Dependencies = states
}

// RecordUnlockCheck records what an unlock's check found: the Lease has
// another holder than status named (a person's unlock names the old one).
func RecordUnlockCheck(st *magosv1.WorkspaceStatus, check *UnlockCheck) {
	if check != nil && check.Holder != "" && st.Lock != nil {
		st.Lock.Holder = check.Holder
	}
}
