package workspace

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
)

// gatherFacts reads what decide needs: it folds a finished run into status
// (and adopts a running one), reads the state lock a person asked to
// release, and evaluates the policy gate and the governing Rollout only
// when a plan is pending. lease is the lock Lease an unlock would delete.
func (r *Reconciler) gatherFacts(ctx context.Context, ws *magosv1.Workspace, revision, inputs string, s settings,
	project *magosv1.Project, del *decide.DeletionFacts) (decide.Facts, *coordinationv1.Lease, error) {
	if err := r.reconcileCurrentRun(ctx, ws, s.Retry); err != nil {
		return decide.Facts{}, nil, err
	}
	st := &ws.Status
	f := decide.Facts{
		Now: time.Now(), Name: ws.Name, Revision: revision, Inputs: inputs,
		ErroredState: st.ErroredState, Lock: st.Lock, LastRun: st.LastRun(), Retry: st.Retry,
		Plan: st.Plan, Applied: st.LastApplied,
		Approval: s.Approval, ApprovedPlan: ws.Spec.ApprovedPlan, Approvals: ws.Spec.Approvals, Interval: s.Interval, Deletion: del,
		Mode: decide.ModeOf(ws), SeparatePlans: r.Options.Guards.AlwaysSeparatePlanIdentity,
	}
	if st.Plan != nil {
		for _, n := range decide.RecordApprovals(st.Plan, ws.Spec.Approvals, f.Now) {
			r.event(ws, n.Type, n.Reason, "%s", n.Message)
		}
		f.Interval = jitteredInterval(s.Interval, string(ws.UID)+"/"+st.Plan.ID, r.Options.DriftJitter)
	}
	if rq := ws.Spec.PlanRequest; rq != nil && rq.ID != st.LastHandledPlanRequest && del == nil {
		f.Request = rq
	}
	if req := ws.Annotations[magosv1.ReconcileRequestAnnotation]; req != "" && req != st.LastHandledReconcileAt {
		f.Requested = true
	}
	if cr := st.CurrentRun; cr != nil && cr.Result == magosv1.ResultRunning {
		f.Running = cr
		if p := st.Plan; cr.Phase == magosv1.RunApply && p != nil && p.ID == cr.PlanID && p.Policy != nil && !p.Policy.Passed && del == nil {
			// An apply runs only a plan the gate passed: a verdict saying
			// otherwise is from before a status write that was lost (the
			// apply was adopted). Evaluated again, status shows the verdict
			// the apply went through.
			if _, err := r.reconcilePolicy(ctx, ws, project, f.Now); err != nil {
				return decide.Facts{}, nil, err
			}
		}
	}
	if len(ws.Spec.DependsOn) > 0 || del != nil {
		deps, err := r.gatherDependencies(ctx, ws, del != nil)
		if err != nil {
			return decide.Facts{}, nil, err
		}
		f.Dependencies = &deps
		if del == nil {
			st.Dependencies = deps.States
		}
	} else {
		st.Dependencies = nil
	}
	if es := st.ErroredState; es != nil {
		f.StateRestored = ws.Annotations[StateRestoredAnnotation] == es.Job
	}
	var lease *coordinationv1.Lease
	if st.Lock != nil && ws.Annotations[UnlockAnnotation] == st.Lock.Holder {
		var err error
		if f.Unlock, lease, err = r.checkUnlock(ctx, ws); err != nil {
			return decide.Facts{}, nil, err
		}
	}
	_, held := decide.DecideBlocked(f)
	if !held && f.MayRunFast() {
		var err error
		if f.Deciders, err = r.decidersOf(ctx, ws, project); err != nil {
			return decide.Facts{}, nil, err
		}
	}
	if held || !gatePending(f) {
		return f, lease, nil
	}
	if f.Plan.HasChanges {
		verdict, err := r.reconcilePolicy(ctx, ws, project, f.Now)
		if err != nil {
			return decide.Facts{}, nil, err
		}
		f.Gate = verdict
	}
	if del == nil && f.RolloutGated() {
		var err error
		if f.Admission, err = r.admissionOf(ctx, ws, f.Plan); err != nil {
			return decide.Facts{}, nil, err
		}
	}
	if f.Approval == magosv1.ApprovalManual && f.Plan.HasChanges {
		rv, err := r.reviewOf(ctx, ws, s, f.Plan, f.Now)
		if err != nil {
			return decide.Facts{}, nil, err
		}
		f.Review = &rv
	}
	return f, lease, nil
}

// gatePending says whether decide will ask the policy gate and the Rollout
// about f.Plan: it is the current plan (planCurrent; while deleting, the
// destroy plan of this revision and inputs), and its changes are not
// applied (a destroy plan is gated until it is applied and the Workspace
// goes).
func gatePending(f decide.Facts) bool {
	return f.PlanCurrent() && (f.Deletion != nil || f.Applied == nil || f.Applied.PlanID != f.Plan.ID)
}
