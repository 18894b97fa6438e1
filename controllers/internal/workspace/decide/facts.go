package decide

import (
	"time"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// Facts are what one reconcile observed about a Workspace that has its
// inputs and source artifact. decide reads nothing else.
type Facts struct {
	Now time.Time
	// Name is the Workspace's name, for the commands messages show.
	Name string
	// Revision and Inputs are what the Workspace should be at: the source
	// artifact's revision and the digest of its inputs.
	Revision, Inputs string

	// Running is the run in progress (status.currentRun), or nil.
	Running *magosv1.RunStatus
	// LivePod is a runner Pod of an earlier run that has not ended.
	LivePod *LivePod

	// ErroredState is state a run could not write back; StateRestored says
	// a person marked it restored.
	ErroredState  *magosv1.ErroredStateStatus
	StateRestored bool
	// Lock is a stuck state lock. UnlockRequested: a person's unlock
	// (magos.dev/unlock) names its holder; Unlock is what checking that
	// request found, nil until asked (AskUnlock).
	Lock            *magosv1.LockStatus
	UnlockRequested bool
	Unlock          *UnlockCheck

	// LastRun is the newest finished run; Retry the retry state after it
	// failed.
	LastRun *magosv1.RunStatus
	Retry   *magosv1.RetryStatus
	// Requested: a reconcile request (magos.dev's use of Flux's
	// reconcile.fluxcd.io/requestedAt) not handled yet.
	Requested bool

	Plan    *magosv1.PlanStatus
	Applied *magosv1.AppliedStatus
	// Gate is the policy verdict on Plan, evaluated when Plan has changes
	// that are not applied.
	Gate GateVerdict
	// Admission is the governing Rollout's answer for Plan's revision.
	Admission Admission

	// Mode is spec.mode: what the next apply does.
	Mode magosv1.WorkspaceMode
	// Request is spec.planRequest while no plan was made for it yet (and
	// the Workspace is not deleted).
	Request *magosv1.PlanRequest

	// Approval is the approval mode; ApprovedPlan and Approvals approve
	// plans (approved).
	Approval     magosv1.ApprovalMode
	ApprovedPlan string
	Approvals    []magosv1.Approval
	// Review is what the approval rules ask of the pending plan; nil when
	// not looked up (then one approval naming the plan will do).
	Review *Review
	// Interval is the drift re-plan interval (0: none).
	Interval time.Duration

	// SeparatePlans: the cluster plans and applies in separate Jobs always
	// (Guards.AlwaysSeparatePlanIdentity). Deciders are what would decide
	// on the next plan besides the spec; nil when not looked up. Together
	// with the spec they choose the fast path (gatedBy).
	SeparatePlans bool
	Deciders      *Deciders

	// Held is why the run queue holds the run a decision starts; nil until
	// the queue was asked, or when it admits the run.
	Held *HeldRun
	// Content is what the Workspace reads in the artifact of Revision; nil
	// until asked (AskContent: when a plan would start, or a run would
	// start where the plan MayCarry).
	Content *ContentCheck

	// Deletion is set while a Workspace with destroyOnDelete is deleted.
	Deletion *DeletionFacts
	// Dependencies are spec.dependsOn's facts; nil when there are none to
	// consider.
	Dependencies *DependencyFacts
}

// LivePod is a runner Pod that has not ended although no run is current.
type LivePod struct{ Name, Phase string }

// UnlockCheck is what the controller found when a person asked to release
// the lock: a run still running (that may hold it), or the Lease now held
// by someone else.
type UnlockCheck struct {
	// Running names the Job or runner Pod of the Workspace still running.
	Running string
	// Holder is the Lease's holder now, if it is not the one named.
	Holder string
}

// GateVerdict is the policy gate's answer on a plan.
type GateVerdict struct {
	Outcome GateOutcome
	// Reason is the PolicyPassed reason of a blocked plan; Message the
	// verdict's words.
	Reason, Message string
	// Until is when a waiver the passed verdict relies on expires (nil:
	// none): a plan still waiting then is evaluated again.
	Until *time.Time
}

type GateOutcome int

const (
	gateNotEvaluated GateOutcome = iota
	GatePassed
	// GateBlocked: a violation, or a plan the gate can never evaluate; a
	// person, a new plan or a change of policies is needed.
	GateBlocked
	// GateErrored: the policies could not be read or evaluated; evaluated
	// again after policyRetryInterval.
	GateErrored
	// GateStalePlan: the stored plan is not the one in status; plan again.
	GateStalePlan
)

// Admission is whether the governing Rollout lets a plan of a revision be
// applied now, and if not why.
type Admission struct {
	Denied  bool
	Message string
}

// DeletionFacts are what deleting a destroyOnDelete Workspace depends on.
type DeletionFacts struct {
	// Skip says why the resources cannot be destroyed (no artifact, a guard
	// refuses the Workspace, unresolvable inputs); "" when they can.
	Skip string
	// SkipGate: destroy without a plan (the Workspace asks and the cluster
	// allows it); GateRefused: it asked and the cluster does not allow it.
	SkipGate, GateRefused bool
}

// action is the one thing a reconcile does after deciding.
type action int

const (
	// ActNone: nothing; a watch wakes the Workspace (Job, source, inputs).
	ActNone action = iota
	// ActWait: nothing until decision.After has passed.
	ActWait
	// ActStart: start decision.Run.
	ActStart
	// ActRecordNoChanges: record a plan without changes as applied.
	ActRecordNoChanges
	// ActReleaseLock: delete the state lock Lease a person named.
	ActReleaseLock
	// ActClearErroredState: the errored state was restored; plan again.
	ActClearErroredState
	// ActFinishDeletion: remove the destroy finalizer (destroyed, or
	// skipped: decision.Message says why).
	ActFinishDeletion
	// ActCarryRevision: the plan (applied or pending) stands for Revision,
	// which changes nothing the Workspace reads.
	ActCarryRevision
	// ActAsk: decide needs the fact decision.Ask names; the reconciler
	// reads it and decides again.
	ActAsk
)

// Ask names a fact decide reads only when a decision depends on it, as it
// costs a read: the reconciler answers it (a read, never a write) and
// decides again.
type Ask int

const (
	// AskContent: what the Workspace reads in the artifact (Facts.Content).
	AskContent Ask = iota + 1
	// AskUnlock: whether a person's unlock request may release the lock
	// (Facts.Unlock): no run of the Workspace is running, and the Lease
	// still has the holder named.
	AskUnlock
)

// Decision is what decide made of the facts: the Workspace's phase, why,
// and the one action to carry out.
type Decision struct {
	Phase   magosv1.WorkspacePhase
	Reason  string
	Message string
	// Stalled: only a person, a new revision or a spec change helps; no run
	// starts and nothing is requeued.
	Stalled bool
	Action  action
	// Run is what ActStart starts.
	Run runjob.Run
	// After is how long ActWait waits.
	After time.Duration
	// Event, if set, is recorded once when the Workspace enters this
	// decision (its phase or reason changed).
	Event *Note
	// HandlesRequest: carrying out the action handles the pending
	// reconcile request (status.lastHandledReconcileAt).
	HandlesRequest bool
	// Queued: the run this decision would start waits in the run queue.
	Queued bool
	// Ask is the fact ActAsk asks for.
	Ask Ask
}

// HandledNow reports whether carrying out d handles the pending reconcile
// request before any run starts: a start handles it once the run started,
// and an Ask only once decided again.
func (d Decision) HandledNow() bool {
	return d.HandlesRequest && d.Action != ActStart && d.Action != ActAsk
}

// ask is decision d, held until the fact a is answered. It handles no
// request yet, and says what d would be if the answer cannot be read.
func ask(d Decision, a Ask) Decision {
	d.Action, d.Ask, d.HandlesRequest, d.After = ActAsk, a, false, 0
	return d
}

// Note is an event to record, which the reconciler emits.
type Note struct{ Type, Reason, Message string }
