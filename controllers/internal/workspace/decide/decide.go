package decide

import (
	"fmt"
	"time"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// Decide is the Workspace's run logic, a pure function of the facts. The
// rules, first match wins:
//
//  1. A run in progress: Planning, Applying or Destroying until it ends.
//     A runner Pod of an earlier run that has not ended: wait for it.
//  2. State a run could not write back (StateNotSaved): Stalled until a
//     person marks it restored, then plan again.
//  3. A stuck state lock (StateLocked): Stalled until a person names its
//     holder in the unlock annotation; the lock is then released once no
//     run of the Workspace is running and the Lease still has that holder.
//  4. A reconcile request not handled yet: plan now (while deleting: retry
//     a failed run now). The newest run failed for this revision and
//     inputs: with a stalling reason (stalls: the reason table) Stalled, never
//     retried; once spec.retry.maxAttempts runs failed, Stalled
//     (RetriesExhausted); else Failed and retrying at
//     status.retry.nextTime (backoff per spec.retry), then planned again.
//  5. Deletion (destroyOnDelete): see decideDeletion.
//  6. No current plan (Facts.PlanCurrent: for this revision and inputs, in
//     the mode's plan mode, and made for the pending plan request if there
//     is one): plan (a destroy plan in mode Destroy, with the pending plan
//     request's addresses). Where nothing decides on the plan (gatedBy is
//     ""), the plan is the fast path instead: planned and applied in one
//     run (Applying), recorded as applied without a gate. Every plan of
//     rules 4 and 7 is chosen the same way. But where only a new revision
//     stands between the plan and a current one (MayCarry: applied or
//     pending) and it changes none of the bytes the plan can depend on
//     (Content), the plan stands for the new revision without a run
//     (carries), keeping its approvals.
//  7. The plan has no changes, or is applied: once the Rollout admits a
//     plan without changes it is recorded as applied; then Idle, with a
//     drift re-plan when the interval since the plan has passed.
//  8. The policy gate: a blocked plan is Failed and Stalled (PolicyViolation,
//     PlanTooLarge); a gate that errored is Failed and evaluated again after
//     policyRetryInterval (PolicyError); a stored plan that is not the one
//     in status is planned again. In mode PlanOnly a plan the gate passed
//     or blocked is Idle (the verdict is reported, nothing is applied),
//     re-planned like rule 7. A denial a waiver lifts passes; a plan still
//     waiting (rules 9 and 10) when the waiver expires is evaluated again
//     then (Gate.Until).
//  9. The governing Rollout has not admitted the revision: AwaitingPromotion
//     (mode Apply only; no Rollout gates a destroy).
//  10. Manual approval and spec.approvedPlan does not name the plan:
//     AwaitingApproval.
//  11. Apply the plan.
//
// A decision that starts a run waits (Waiting, DependencyNotReady) while a
// Workspace of spec.dependsOn is not Ready, stalls (DependencyCycle) when
// spec.dependsOn leads back to the Workspace, and, while the Workspace is
// deleted, waits (DependentsExist) until the Workspaces depending on it are
// gone.
//
// A run that would then start is held by the run queue (Held, asked once a
// decision starts a run, schedule.Scheduler.Admit): over the controller's,
// the namespace's or the Project's bound on runs in progress, or a plan
// over the namespace's plan rate, it waits without a Job (Waiting, Queued;
// a held drift re-plan leaves an applied Workspace Idle and Ready) until a
// slot or the rate frees.
//
// A decision that starts a plan stalls (ConfigurationRefused) when a
// configuration file the Workspace reads is beyond what the controller
// parses (Content.Refused).
//
// Facts that cost a read are asked for only where a decision depends on
// them (ActAsk, then decide again): what the Workspace reads in the
// artifact (AskContent) before a plan starts or a plan that MayCarry
// would be replaced, and whether an unlock request may release the lock
// (AskUnlock).
//
// Waiting for a person (AwaitingApproval, AwaitingPromotion) is settled:
// Ready=False without Reconciling or Stalled. A Stalled decision never
// starts a run or waits to retry, and a retried one is never Stalled.
func Decide(f Facts) Decision {
	d := holdForDependencies(f, untilWaiverExpires(f, decideRun(f)))
	if d.Action == ActStart && f.Content == nil && (f.MayCarry() || magosv1.RunPlans(d.Run.Phase)) {
		// The revision may change nothing the plan read (it carries), or
		// a file the plan would read may be refused.
		return ask(d, AskContent)
	}
	if d.Action == ActStart && magosv1.RunPlans(d.Run.Phase) && f.Content != nil && f.Content.Refused != "" {
		return refusedDecision(f)
	}
	if d.Action == ActStart && f.Held != nil {
		return Queued(d, f, f.Held)
	}
	return d
}

// decideRun is decide before spec.dependsOn is considered.
func decideRun(f Facts) Decision {
	if d, ok := DecideBlocked(f); ok {
		return d
	}
	if f.Deletion != nil {
		d := decideDeletion(f)
		d.HandlesRequest = f.Requested
		return d
	}
	plan := f.Plan
	if !f.PlanCurrent() {
		if f.carries() {
			return carryDecision(f)
		}
		return StartDecision(f.planRun(false))
	}
	if !plan.HasChanges || (f.Applied != nil && f.Applied.PlanID == plan.ID) {
		return decideSettled(f)
	}
	if f.Mode == magosv1.ModePlanOnly {
		return decidePlanOnly(f)
	}
	if d, ok := decideGate(f, PlanNoun(plan)+" "+plan.ID+" is blocked by policy: "+f.Gate.Message); ok {
		return d
	}
	if f.Admission.Denied && f.RolloutGated() {
		return awaitingPromotion(plan, f.Admission)
	}
	if f.Approval == magosv1.ApprovalManual && !f.approvedEnough(plan) {
		msg := fmt.Sprintf("%s %s (%s) of revision %s awaits approval: set spec.approvedPlan to %q (kubectl magos approve %s --plan %s)",
			PlanNoun(plan), plan.ID, PlanSummary(plan), plan.Revision, plan.ID, f.Name, plan.ID)
		if rv := f.Review; rv != nil && rv.ruled() {
			msg = fmt.Sprintf("%s %s (%s) of revision %s awaits approvals: %s (kubectl magos approve %s --plan %s)",
				PlanNoun(plan), plan.ID, PlanSummary(plan), plan.Revision, rv.missing(), f.Name, plan.ID)
		}
		return awaitingApproval(f, plan, Decision{
			Phase: magosv1.PhaseAwaitingApproval, Reason: magosv1.ReasonAwaitingApproval,
			Message: msg,
			Event:   &Note{Normal, magosv1.ReasonAwaitingApproval, fmt.Sprintf("%s %s (%s) awaits approval", PlanNoun(plan), plan.ID, PlanSummary(plan))},
		})
	}
	return StartDecision(runjob.Run{Phase: magosv1.RunApply, Mode: plan.Mode, PlanID: plan.ID, PlanDigest: plan.Digest, PlanBundleDigest: plan.BundleDigest})
}

// DecideBlocked applies rules 1–4, which hold a Workspace whether or not it
// is being deleted; ok is false when none does.
func DecideBlocked(f Facts) (Decision, bool) {
	switch {
	case f.Running != nil:
		return RunningDecision(f.Running, f.Deletion != nil), true
	case f.LivePod != nil:
		phase := phaseOfRun[f.LivePod.Phase]
		if phase == "" {
			phase = magosv1.PhasePlanning
		}
		return Decision{Phase: phase, Reason: string(phase), Message: fmt.Sprintf(
			"The runner Pod %s (%s) of an earlier run is still running and may be using the state; waiting for it to end",
			f.LivePod.Name, f.LivePod.Phase)}, true
	case f.ErroredState != nil && f.StateRestored:
		return Decision{Phase: magosv1.PhasePlanning, Reason: magosv1.ReasonStateRestored, Action: ActClearErroredState,
			Message: fmt.Sprintf("The state of run %s was marked restored; planning again", f.ErroredState.Job)}, true
	case f.ErroredState != nil:
		return Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonStateNotSaved, Stalled: true,
			Message: erroredStateMessage(f.Name, f.ErroredState)}, true
	case f.Lock != nil && f.UnlockRequested && f.Unlock == nil:
		return ask(decideLock(f.Name, f.Lock, nil), AskUnlock), true
	case f.Lock != nil:
		return decideLock(f.Name, f.Lock, f.Unlock), true
	case f.Requested && f.Deletion == nil:
		d := StartDecision(f.planRun(false))
		d.HandlesRequest = true
		return d, true
	case f.Requested:
		return Decision{}, false // a deletion retries now
	}
	last := f.LastRun
	if f.Retry == nil || last == nil || last.Revision != f.Revision || last.InputsDigest != f.Inputs {
		return Decision{}, false
	}
	if f.Deletion != nil {
		// A deletion's failed run is retried whatever its reason: the
		// finalizer holds the Workspace until it goes, and unsetting
		// destroyOnDelete lets it go. A failure from before the deletion
		// does not hold it.
		if wait := retryIn(f.Retry, f.Now); deletionRun(last) && wait > 0 {
			return Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonDestroyFailed, Action: ActWait, After: wait,
				Message: fmt.Sprintf("The %s run %s failed: %s; retrying in %s (unset spec.destroyOnDelete to delete the Workspace and leave the resources)",
					runKind(last.Phase, last.Mode, false), last.Job, last.Message, wait.Round(time.Second))}, true
		}
		return Decision{}, false
	}
	reason := OrDefault(last.Reason, magosv1.ReasonRunFailed)
	if stalls(reason) {
		return Decision{Phase: magosv1.PhaseFailed, Reason: reason, Stalled: true,
			Message: fmt.Sprintf("The %s run %s failed: %s; it is not retried until the revision or inputs change", last.Phase, last.Job, last.Message)}, true
	}
	if f.Retry.NextTime == nil {
		return Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonRetriesExhausted, Stalled: true,
			Message: fmt.Sprintf("The %s run %s failed (%s, %d attempts in a row): %s; no attempts are left (spec.retry.maxAttempts): it is retried when the revision or inputs change, or on request (kubectl magos retry %s)",
				last.Phase, last.Job, reason, f.Retry.Attempts, last.Message, f.Name)}, true
	}
	if wait := retryIn(f.Retry, f.Now); wait > 0 {
		return Decision{Phase: magosv1.PhaseFailed, Reason: reason, Action: ActWait, After: wait,
			Message: fmt.Sprintf("The %s run %s failed: %s; retrying in %s", last.Phase, last.Job, last.Message, wait.Round(time.Second))}, true
	}
	return Decision{}, false
}

// retryIn is how long until the next attempt of rs; 0 when it is due or
// none is planned.
func retryIn(rs *magosv1.RetryStatus, now time.Time) time.Duration {
	if rs == nil || rs.NextTime == nil {
		return 0
	}
	return max(rs.NextTime.Sub(now), 0)
}

// decideLock holds a Workspace with a stuck state lock (rule 3).
func decideLock(name string, lock *magosv1.LockStatus, unlock *UnlockCheck) Decision {
	held := func(msg string) Decision {
		return Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonStateLocked, Stalled: true, Message: msg}
	}
	howTo := func(holder string) string {
		return fmt.Sprintf("once no run is using the state, release it with: kubectl magos unlock %s (or kubectl annotate workspace %s %s=%s --overwrite)", name, name, magosv1.UnlockAnnotation, holder)
	}
	switch {
	case unlock == nil:
		return held(fmt.Sprintf("The state lock (Lease %s) is held by %q, left by a run that did not finish; %s", lock.Lease, lock.Holder, howTo(lock.Holder)))
	case unlock.Running != "":
		return held(fmt.Sprintf("Not releasing the state lock (Lease %s) held by %q: %s of this Workspace is still running and may hold it; "+
			"the unlock waits until it has ended", lock.Lease, lock.Holder, unlock.Running))
	case unlock.Holder != "" && unlock.Holder != lock.Holder:
		return held(fmt.Sprintf("Not releasing the state lock (Lease %s): it is now held by %q, not %q; %s", lock.Lease, unlock.Holder, lock.Holder, howTo(unlock.Holder)))
	}
	return Decision{Phase: magosv1.PhasePlanning, Reason: magosv1.ReasonUnlocked, Action: ActReleaseLock,
		Message: fmt.Sprintf("Releasing the state lock held by %q; planning again", lock.Holder)}
}

// decideSettled is rule 7: the plan for this revision and inputs has no
// changes or is applied.
func decideSettled(f Facts) Decision {
	plan := f.Plan
	if !plan.HasChanges && (f.Applied == nil || f.Applied.Revision != plan.Revision) {
		if f.Admission.Denied && f.RolloutGated() {
			return awaitingPromotion(plan, f.Admission)
		}
		return Decision{Phase: magosv1.PhaseIdle, Message: settledMessage(f), Action: ActRecordNoChanges}
	}
	return withDriftReplan(f, Decision{Phase: magosv1.PhaseIdle, Message: settledMessage(f)})
}

// withDriftReplan is settled decision d, or the drift re-plan due once the
// interval since the plan has passed (a wait for it until then).
func withDriftReplan(f Facts, d Decision) Decision {
	plan := f.Plan
	if f.Interval <= 0 {
		return d
	}
	if plan.Time != nil {
		if wait := plan.Time.Add(f.Interval).Sub(f.Now); wait > 0 {
			d.Action, d.After = ActWait, wait
			return d
		}
	}
	return StartDecision(f.planRun(true))
}

// decideGate is rule 8 on the pending plan; blocked is the message of a
// plan the gate blocks. ok is false when the plan passed.
func decideGate(f Facts, blocked string) (Decision, bool) {
	g := f.Gate
	switch g.Outcome {
	case GatePassed:
		return Decision{}, false
	case GateStalePlan:
		return StartDecision(f.planRun(false)), true
	case GateBlocked:
		return Decision{Phase: magosv1.PhaseFailed, Reason: g.Reason, Stalled: true, Message: blocked}, true
	case GateErrored:
		return Decision{Phase: magosv1.PhaseFailed, Reason: g.Reason, Action: ActWait, After: policyRetryInterval,
			Message: fmt.Sprintf("%s; evaluating again in %s", blocked, policyRetryInterval)}, true
	}
	// Not evaluated: a programming error; say so rather than apply.
	return Decision{Phase: magosv1.PhaseValidating, Reason: magosv1.ProgressingReason, Action: ActWait, After: time.Second,
		Message: "The plan's policies are not evaluated yet"}, true
}

// untilWaiverExpires is d, waking when the waiver the gate passed the
// plan with expires if d waits for a person on that plan.
func untilWaiverExpires(f Facts, d Decision) Decision {
	until := f.Gate.Until
	waiting := d.Phase == magosv1.PhaseAwaitingApproval || d.Phase == magosv1.PhaseAwaitingPromotion
	if until == nil || !waiting || (d.Action != ActNone && d.Action != ActWait) {
		return d
	}
	if wait := max(until.Sub(f.Now), 0); d.Action == ActNone || wait < d.After {
		d.Action, d.After = ActWait, wait
	}
	return d
}

func awaitingPromotion(plan *magosv1.PlanStatus, a Admission) Decision {
	return Decision{
		Phase: magosv1.PhaseAwaitingPromotion, Reason: magosv1.ReasonAwaitingPromotion,
		Message: fmt.Sprintf("Plan %s (%s) of revision %s: %s", plan.ID, PlanSummary(plan), plan.Revision, a.Message),
		Event:   &Note{Normal, magosv1.ReasonAwaitingPromotion, fmt.Sprintf("Plan %s of revision %s: %s", plan.ID, plan.Revision, a.Message)},
	}
}

// decideDeletion is rule 5, for a deleted destroyOnDelete Workspace that
// applied something: it destroys its resources through the same gate as
// any change (a destroy plan, the policy gate, approval under approval:
// Manual, then an apply of exactly that plan), or destroys without a plan
// where the gate is skipped. No Rollout gates a destroy. It never hangs on
// a missing dependency: without an artifact or resolvable inputs the
// destroy is skipped, and the resources and state are left in place.
func decideDeletion(f Facts) Decision {
	del := f.Deletion
	if last := f.LastRun; last != nil && deletionRun(last) && destroyed(last) {
		return Decision{Phase: magosv1.PhaseDestroying, Reason: magosv1.ReasonDestroyed, Action: ActFinishDeletion}
	}
	if del.Skip != "" {
		return Decision{Phase: magosv1.PhaseDestroying, Reason: magosv1.ReasonDestroySkipped, Action: ActFinishDeletion, Message: del.Skip}
	}
	if del.SkipGate {
		return StartDecision(runjob.Run{Phase: magosv1.RunDestroy})
	}
	plan := f.Plan
	if !f.PlanCurrent() {
		d := StartDecision(f.planRun(false))
		if del.GateRefused {
			d.Event = &Note{Warning, magosv1.ReasonDestroyGateEnforced,
				"spec.destroy.gate is Skip, but this cluster does not allow skipping the destroy gate (--allow-destroy-skip-gate); the destroy is planned, checked by policy and approved like any plan"}
		}
		return d
	}
	if !plan.HasChanges {
		return Decision{Phase: magosv1.PhaseDestroying, Reason: magosv1.ReasonDestroyed, Action: ActFinishDeletion,
			Message: fmt.Sprintf("Destroy plan %s of revision %s has no changes: nothing is left to destroy", plan.ID, plan.Revision)}
	}
	if d, ok := decideGate(f, destroyBlockedMessage(plan, f.Gate.Message)); ok {
		return d
	}
	if f.Approval == magosv1.ApprovalManual && !f.approvedEnough(plan) {
		return awaitingApproval(f, plan, Decision{
			Phase: magosv1.PhaseAwaitingApproval, Reason: magosv1.ReasonDestroyAwaitingApproval, Message: destroyApprovalMessage(plan),
			Event: &Note{Normal, magosv1.ReasonDestroyAwaitingApproval, fmt.Sprintf("The Workspace is being deleted: destroy plan %s (%s) awaits approval", plan.ID, PlanSummary(plan))},
		})
	}
	return StartDecision(runjob.Run{Phase: magosv1.RunApply, Mode: magosv1.PlanModeDestroy, PlanID: plan.ID, PlanDigest: plan.Digest, PlanBundleDigest: plan.BundleDigest})
}

// StartDecision starts rn: the Workspace is in rn's phase from now.
func StartDecision(rn runjob.Run) Decision {
	phase := runPhase(rn.Phase, rn.Mode)
	return Decision{Phase: phase, Reason: string(phase), Action: ActStart, Run: rn}
}

// RunningDecision describes the run in progress cr (of a Workspace being
// deleted, when deleting).
func RunningDecision(cr *magosv1.RunStatus, deleting bool) Decision {
	phase := runPhase(cr.Phase, cr.Mode)
	msg := fmt.Sprintf("Run %s (%s) of revision %s is in progress", cr.Job, runKind(cr.Phase, cr.Mode, cr.Drift), cr.Revision)
	if deleting {
		msg += "; the Workspace is being deleted"
	}
	return Decision{Phase: phase, Reason: string(phase), Message: msg}
}

// Event types, short for notes.
const (
	Normal  = "Normal"
	Warning = "Warning"
)
