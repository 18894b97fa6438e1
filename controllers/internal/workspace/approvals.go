package workspace

import (
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// An approval is spec.approvedPlan naming the plan (by no one in
// particular) or an entry of spec.approvals naming it, in the name of the
// user who wrote it: the chart's admission policy admits a new entry only
// with its writer's own username and groups. The controller records each
// entry approving the current plan in status.plan.approvals, with the time
// it first saw it, and an Approved event.

// approves says whether entry a approves plan p: it names p's ID and, if
// it names a digest, p's digest.
func approves(a magosv1.Approval, p *magosv1.PlanStatus) bool {
	return a.Plan == p.ID && (a.Digest == "" || a.Digest == p.Digest)
}

// approved says whether plan p is approved.
func (f facts) approved(p *magosv1.PlanStatus) bool {
	return f.ApprovedPlan == p.ID || slices.ContainsFunc(f.Approvals, func(a magosv1.Approval) bool { return approves(a, p) })
}

// recordApprovals adds to p.Approvals the users of entries approving p it
// does not hold yet, at now, and returns them.
func recordApprovals(p *magosv1.PlanStatus, entries []magosv1.Approval, now time.Time) []magosv1.PlanApproval {
	var added []magosv1.PlanApproval
	for _, a := range entries {
		if !approves(a, p) || slices.ContainsFunc(p.Approvals, func(r magosv1.PlanApproval) bool { return r.User == a.User }) {
			continue
		}
		r := magosv1.PlanApproval{User: a.User, Groups: slices.Clone(a.Groups), Time: metav1.NewTime(now)}
		p.Approvals = append(p.Approvals, r)
		added = append(added, r)
	}
	return added
}

// approver names who approved, for events and messages: "alice (groups
// platform-admins, sre)".
func approver(r magosv1.PlanApproval) string {
	if len(r.Groups) == 0 {
		return r.User
	}
	return r.User + " (groups " + strings.Join(r.Groups, ", ") + ")"
}
