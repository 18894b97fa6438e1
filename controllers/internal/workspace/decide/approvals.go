package decide

import (
	"fmt"
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

// RecordApprovals adds to p.Approvals the users of entries approving p it
// does not hold yet, at now, and returns an Approved note for each.
func RecordApprovals(p *magosv1.PlanStatus, entries []magosv1.Approval, now time.Time) []Note {
	var notes []Note
	for _, a := range entries {
		if !approves(a, p) || slices.ContainsFunc(p.Approvals, func(r magosv1.PlanApproval) bool { return r.User == a.User }) {
			continue
		}
		r := magosv1.PlanApproval{User: a.User, Groups: slices.Clone(a.Groups), Time: metav1.NewTime(now)}
		p.Approvals = append(p.Approvals, r)
		notes = append(notes, Note{Normal, magosv1.ReasonApproved, fmt.Sprintf("Plan %s (%s) approved by %s", p.ID, PlanSummary(p), Approver(r))})
	}
	return notes
}

// Approver names who approved, for events and messages: "alice (groups
// platform-admins, sre)".
func Approver(r magosv1.PlanApproval) string {
	if len(r.Groups) == 0 {
		return r.User
	}
	return r.User + " (groups " + strings.Join(r.Groups, ", ") + ")"
}

// Review is what the approval rule governing a plan asks of it
// (spec.approvalRules), and which approvals count.
type Review struct {
	// Rule names the governing rule; "" when none does (one approval).
	Rule string
	// Auto: the rule applies the plan without an approval.
	Auto bool
	// Needed approvals, by distinct users, in one of Groups if set.
	Needed int
	Groups []string
	// Counted are the users whose approvals count ("spec.approvedPlan"
	// for that field); Ignored those who approved outside Groups; Expired
	// those whose approval is older than MaxAge.
	Counted, Ignored, Expired []string
	// MaxAge is how long an approval counts (0: for ever); Expires when
	// the first counted one stops counting (nil: never).
	MaxAge  time.Duration
	Expires *time.Time
}

// ReviewPlan is the review of plan p under rule (nil: none governs), with
// the approvals entries and spec.approvedPlan give.
func ReviewPlan(rule *magosv1.ApprovalRule, p *magosv1.PlanStatus, entries []magosv1.Approval, approvedPlan string, now time.Time, maxAge time.Duration) Review {
	r := Review{Needed: 1, MaxAge: maxAge}
	if rule != nil {
		r.Rule, r.Auto, r.Groups = rule.Name, rule.AutoApprove, rule.Groups
		if rule.Approvals != nil {
			r.Needed = int(*rule.Approvals)
		}
	}
	for _, a := range entries {
		if !approves(a, p) || slices.Contains(r.Counted, a.User) || slices.Contains(r.Ignored, a.User) || slices.Contains(r.Expired, a.User) {
			continue
		}
		if seen := firstSeen(p, a.User); maxAge > 0 && seen != nil {
			expires := seen.Add(maxAge)
			if !now.Before(expires) {
				r.Expired = append(r.Expired, a.User)
				continue
			}
			if r.Expires == nil || expires.Before(*r.Expires) {
				r.Expires = &expires
			}
		}
		if len(r.Groups) > 0 && !slices.ContainsFunc(a.Groups, func(g string) bool { return slices.Contains(r.Groups, g) }) {
			r.Ignored = append(r.Ignored, a.User)
			continue
		}
		r.Counted = append(r.Counted, a.User)
	}
	if approvedPlan == p.ID && len(r.Groups) == 0 {
		r.Counted = append(r.Counted, "spec.approvedPlan")
	}
	return r
}

// firstSeen is when the controller first saw user's approval of p.
func firstSeen(p *magosv1.PlanStatus, user string) *time.Time {
	for _, r := range p.Approvals {
		if r.User == user {
			return &r.Time.Time
		}
	}
	return nil
}

// Satisfied says whether the plan may be applied.
func (r Review) Satisfied() bool { return r.Auto || len(r.Counted) >= r.Needed }

// missing says what the plan still needs: "1 of 2 approvals (rule
// deletions), from members of platform-admins (bob is in none)".
func (r Review) missing() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d approvals", len(r.Counted), r.Needed)
	if r.Rule != "" {
		fmt.Fprintf(&b, " (rule %s)", r.Rule)
	}
	if len(r.Groups) > 0 {
		fmt.Fprintf(&b, ", from members of %s", strings.Join(r.Groups, " or "))
	}
	if len(r.Ignored) > 0 {
		fmt.Fprintf(&b, " (not counted: %s, in none of them)", strings.Join(r.Ignored, ", "))
	}
	return b.String()
}

// awaitingApproval is decision d of a plan that is not approved enough:
// planned again when an approval it needed expired (the new plan is
// approved anew), else d, waking when the first approval it counts
// expires.
func awaitingApproval(f Facts, plan *magosv1.PlanStatus, d Decision) Decision {
	rv := f.Review
	if rv == nil {
		return d
	}
	if len(rv.Expired) > 0 {
		again := StartDecision(f.planRun(false))
		again.Reason = magosv1.ReasonApprovalExpired
		again.Message = fmt.Sprintf("The approval of %s %s by %s is older than %s (spec.approvalMaxAge): planning again, to be approved anew",
			strings.ToLower(PlanNoun(plan)), plan.ID, strings.Join(rv.Expired, ", "), rv.MaxAge)
		again.Event = &Note{Normal, magosv1.ReasonApprovalExpired, again.Message}
		return again
	}
	if rv.Expires != nil {
		d.Action, d.After = ActWait, max(rv.Expires.Sub(f.Now), 0)
	}
	return d
}

// approvedEnough says whether plan p may be applied under approval Manual:
// the review says so, or, unreviewed (no rule, no expiry), one approval
// names it.
func (f Facts) approvedEnough(p *magosv1.PlanStatus) bool {
	rv := f.Review
	if rv == nil {
		unruled := ReviewPlan(nil, p, f.Approvals, f.ApprovedPlan, f.Now, 0)
		rv = &unruled
	}
	return rv.Satisfied()
}
