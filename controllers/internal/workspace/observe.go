package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/apis/plansummary"
	"github.com/magos-dev/magos/controllers/internal/approvalrules"
	"github.com/magos-dev/magos/controllers/internal/configtree"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
	"github.com/magos-dev/magos/controllers/internal/rerror"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
	"github.com/magos-dev/magos/controllers/internal/workspace/schedule"
)

// gatherFacts reads what decide needs: it folds a finished run into status
// (and adopts a running one), and evaluates the policy gate and the
// governing Rollout only when a plan is pending. What an unlock request
// found and what the Workspace reads in the artifact are read when decide
// asks for them (decide.ActAsk).
func (r *Reconciler) gatherFacts(ctx context.Context, ws *magosv1.Workspace, revision, inputs string, s settings,
	project *magosv1.Project, del *decide.DeletionFacts) (decide.Facts, error) {
	if err := r.reconcileCurrentRun(ctx, ws, s.Retry); err != nil {
		return decide.Facts{}, err
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
		r.notes(ws, decide.RecordApprovals(st.Plan, ws.Spec.Approvals, f.Now))
		f.Interval = schedule.JitteredInterval(s.Interval, string(ws.UID)+"/"+st.Plan.ID, r.Options.DriftJitter)
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
				return decide.Facts{}, err
			}
		}
	}
	if len(ws.Spec.DependsOn) > 0 || del != nil {
		deps, err := r.gatherDependencies(ctx, ws, del != nil)
		if err != nil {
			return decide.Facts{}, err
		}
		f.Dependencies = &deps
		if del == nil {
			decide.RecordDependencies(st, deps.States)
		}
	} else {
		decide.RecordDependencies(st, nil)
	}
	if es := st.ErroredState; es != nil {
		f.StateRestored = ws.Annotations[StateRestoredAnnotation] == es.Job
	}
	f.UnlockRequested = st.Lock != nil && ws.Annotations[UnlockAnnotation] == st.Lock.Holder
	if err := r.gatherPlanFacts(ctx, ws, &f, s, project); err != nil {
		return decide.Facts{}, err
	}
	return f, nil
}

// gatherPlanFacts reads what decides on f.Plan: the fast path's deciders,
// and, when the plan is pending (gatePending), the policy gate, the
// governing Rollout and the approval rules. It runs again when a pending
// plan is carried to a new revision.
func (r *Reconciler) gatherPlanFacts(ctx context.Context, ws *magosv1.Workspace, f *decide.Facts, s settings, project *magosv1.Project) error {
	_, held := decide.DecideBlocked(*f)
	if !held && f.MayRunFast() {
		var err error
		if f.Deciders, err = r.decidersOf(ctx, ws, project); err != nil {
			return err
		}
	}
	if held || !gatePending(*f) {
		return nil
	}
	if f.Plan.HasChanges {
		verdict, err := r.reconcilePolicy(ctx, ws, project, f.Now)
		if err != nil {
			return err
		}
		f.Gate = verdict
	}
	if f.Deletion == nil && f.RolloutGated() {
		var err error
		if f.Admission, err = r.admissionOf(ctx, ws, f.Plan); err != nil {
			return err
		}
	}
	if f.Approval == magosv1.ApprovalManual && f.Plan.HasChanges {
		rv, err := r.reviewOf(ctx, ws, s, f.Plan, f.Now)
		if err != nil {
			return err
		}
		f.Review = &rv
	}
	return nil
}

// gatePending says whether decide will ask the policy gate and the Rollout
// about f.Plan: it is the current plan (Facts.PlanCurrent; while deleting,
// the destroy plan of this revision and inputs), and its changes are not
// applied (a destroy plan is gated until it is applied and the Workspace
// goes).
func gatePending(f decide.Facts) bool {
	return f.PlanCurrent() && (f.Deletion != nil || f.Applied == nil || f.Applied.PlanID != f.Plan.ID)
}

// artifact is the Flux artifact a run works on.
type artifact = fluxsource.Artifact

// contentOf is what ws reads in art (configtree), each artifact read once
// for all Workspaces; unknown, so that nothing carries, without Trees or
// when the artifact cannot be read (logged: the run reads it itself).
func (r *Reconciler) contentOf(ctx context.Context, ws *magosv1.Workspace, art artifact, opts configtree.Options) *decide.ContentCheck {
	if r.Trees == nil || art.URL == "" {
		return &decide.ContentCheck{Unknown: "the artifact is not read by the controller"}
	}
	tree, err := r.Trees.Tree(ctx, art.URL, art.Digest)
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("Could not read the artifact for what the Workspace reads: a new revision is planned whatever it changes",
			"revision", art.Revision, "error", err.Error())
		return &decide.ContentCheck{Unknown: "the artifact could not be read"}
	}
	c := tree.Content(ws.Spec.Path, opts)
	check := &decide.ContentCheck{Digest: c.Digest, Dirs: c.Read, Unknown: c.Unknown}
	if c.Refused != nil {
		check.Refused = c.Refused.Error()
	}
	return check
}

// admissionOf asks the Rollout governing the Workspace's Project, from its
// status alone, whether plan may be applied now.
func (r *Reconciler) admissionOf(ctx context.Context, ws *magosv1.Workspace, plan *magosv1.PlanStatus) (decide.Admission, error) {
	if ws.Spec.ProjectRef == nil {
		return decide.Admission{}, nil
	}
	var list magosv1.RolloutList
	if err := r.List(ctx, &list, client.InNamespace(ws.Namespace)); err != nil {
		return decide.Admission{}, fmt.Errorf("listing Rollouts: %w", err)
	}
	d := magosv1.RolloutAdmission(magosv1.GoverningRollout(list.Items, ws.Spec.ProjectRef.Name), ws, plan.Revision)
	return decide.Admission{Denied: !d.Allowed, Message: d.Message}, nil
}

// reviewOf reviews the pending plan under the approval rules at now (the
// Workspace's, and its Project's as a floor); it writes nothing: status
// records the review (decide.ComputeStatus, through the observation) and
// the AutoApproved event follows from it (decide.ReviewNotes). The stored
// plan is read only where a rule reads plan.resources.
func (r *Reconciler) reviewOf(ctx context.Context, ws *magosv1.Workspace, s settings, plan *magosv1.PlanStatus, now time.Time) (decide.Review, error) {
	p := approvalrules.Plan{
		Add: int64(plan.Add), Change: int64(plan.Change), Destroy: int64(plan.Destroy),
		DestroyMode: plan.Mode == magosv1.PlanModeDestroy, Drift: plan.Drift,
		Name: ws.Name, Namespace: ws.Namespace, Labels: ws.Labels,
	}
	if s.ApprovalRules.ReadsResources() || s.FloorRules.ReadsResources() {
		var err error
		if p.Resources, err = r.planResources(ctx, ws, plan); err != nil {
			return decide.Review{}, err
		}
	}
	rule, err := s.ApprovalRules.Govern(p)
	if err != nil {
		return decide.Review{}, rerror.Stall(magosv1.ReasonInvalidApprovalRule, err)
	}
	rv := decide.ReviewPlan(rule, plan, ws.Spec.Approvals, ws.Spec.ApprovedPlan, now, s.ApprovalMaxAge)
	if s.FloorRules != nil {
		floor, err := s.FloorRules.Govern(p)
		if err != nil {
			return decide.Review{}, rerror.Stall(magosv1.ReasonInvalidApprovalRule, err)
		}
		rv = rv.WithFloor(decide.ReviewPlan(floor, plan, ws.Spec.Approvals, ws.Spec.ApprovedPlan, now, s.ApprovalMaxAge))
	}
	return rv, nil
}

// planResourceCache keeps what planResources read, by bundle digest: a
// plan awaiting approval is reviewed on every reconcile.
var planResourceCache = approvalrules.NewResourceCache(256, 100_000)

// planResources are the resource changes of the stored plan, read as the
// policy gate reads it (bounded, and only the bundle recorded with the
// plan), once per bundle digest (planResourceCache). A plan too large to
// read stalls: the same plan never fits.
func (r *Reconciler) planResources(ctx context.Context, ws *magosv1.Workspace, plan *magosv1.PlanStatus) ([]plansummary.ResourceChange, error) {
	return planResourceCache.Resources(plan.BundleDigest, func() ([]plansummary.ResourceChange, error) {
		return r.readPlanResources(ctx, ws, plan)
	})
}

// readPlanResources reads the resource changes of the stored plan.
func (r *Reconciler) readPlanResources(ctx context.Context, ws *magosv1.Workspace, plan *magosv1.PlanStatus) ([]plansummary.ResourceChange, error) {
	stored, err := planstore.LoadJSONSealed(ctx, r.planGetter(ws.Namespace), ws.Name, r.Options.PlanJSONLimit(), plan.BundleDigest)
	switch {
	case errors.Is(err, planstore.ErrTooLarge):
		return nil, rerror.Stall(magosv1.ReasonInvalidApprovalRule, fmt.Errorf("an approval rule reads plan.resources, but the stored plan is too large to read: %w", err))
	case err != nil:
		return nil, fmt.Errorf("reading the stored plan for the approval rules: %w", err)
	case stored.ID != plan.ID:
		return nil, fmt.Errorf("reading the stored plan for the approval rules: it is %s, not %s", stored.ID, plan.ID)
	}
	parsed, err := plansummary.Parse(stored.JSON)
	if err != nil {
		return nil, fmt.Errorf("reading the stored plan for the approval rules: %w", err)
	}
	return parsed.ResourceChanges, nil
}

// decidersOf looks up what would decide on ws's next plan besides its
// spec: the policies that select it, as the gate would select them, and
// the Rollout governing its Project.
func (r *Reconciler) decidersOf(ctx context.Context, ws *magosv1.Workspace, project *magosv1.Project) (*decide.Deciders, error) {
	d := &decide.Deciders{}
	selection, err := r.selectPolicies(ctx, ws, project)
	d.Ignored = selection.Ignored
	switch {
	case err != nil:
		d.Policies = fmt.Sprintf("the policies could not be listed (%v)", err)
	case len(selection.Policies) > 0:
		names := make([]string, 0, len(selection.Policies))
		for _, p := range selection.Policies {
			names = append(names, p.Name())
		}
		d.Policies = "policy " + strings.Join(names, ", ") + " selects the Workspace"
	}
	if ws.Spec.ProjectRef != nil {
		var list magosv1.RolloutList
		if err := r.List(ctx, &list, client.InNamespace(ws.Namespace)); err != nil {
			return nil, fmt.Errorf("listing Rollouts: %w", err)
		}
		if ro := magosv1.GoverningRollout(list.Items, ws.Spec.ProjectRef.Name); ro != nil {
			d.Rollout = ro.Name
		}
	}
	return d, nil
}

// noPolicyDecides records, as a fast run starts, that no policy gates it
// (decide.FoldUngated).
func (r *Reconciler) noPolicyDecides(ws *magosv1.Workspace, d *decide.Deciders) {
	r.notes(ws, decide.FoldUngated(ws, ws.Namespace, d.Ignored))
}
