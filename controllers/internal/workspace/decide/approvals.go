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
//
// Approvals are counted by person: spec.approvedPlan names no one, so it
// counts as one approval at most, and none next to a named one (it may be
// that approver's); an entry written as a ServiceAccount (a controller
// writing Workspaces from a WorkspaceSet or from Git, a CI job) is no
// person's and counts only under a rule naming that ServiceAccount. A
// Project's approval rules are a floor (WithFloor): a plan of a Workspace
// with rules of its own needs what both ask.

// approves says whether entry a approves plan p: it names p's ID and p's
// digest (an entry without one approves nothing: a plan replaced under the
// same ID would pass for it).
func approves(a magosv1.Approval, p *magosv1.PlanStatus) bool {
	return a.Plan == p.ID && a.Digest != "" && a.Digest == p.Digest
}

// serviceAccountPrefix begins the username of every ServiceAccount.
const serviceAccountPrefix = "system:serviceaccount:"

// ServiceAccountOf is the "namespace/name" of the ServiceAccount whose
// username user is, or "" for any other user.
func ServiceAccountOf(user string) string {
	rest, ok := strings.CutPrefix(user, serviceAccountPrefix)
	if !ok {
		return ""
	}
	ns, name, ok := strings.Cut(rest, ":")
	if !ok || ns == "" || name == "" {
		return rest
	}
	return ns + "/" + name
}

// ApprovedPlanApprover names spec.approvedPlan where it counts.
const ApprovedPlanApprover = "spec.approvedPlan"

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
	// those whose approval is older than MaxAge; ServiceAccounts those who
	// approved as a ServiceAccount the rule does not name.
	Counted, Ignored, Expired, ServiceAccounts []string
	// MaxAge is how long an approval counts (0: for ever); Expires when
	// the first counted one stops counting (nil: never).
	MaxAge  time.Duration
	Expires *time.Time
	// Floor is the review under the Project's rules of a Workspace with
	// rules of its own: the plan needs both (WithFloor).
	Floor *Review
	// project: this is the review under the Project's rules.
	project bool
}

// ReviewPlan is the review of plan p under rule (nil: none governs), with
// the approvals entries and spec.approvedPlan give: each person counts
// once, spec.approvedPlan only where no named approval counts, a
// ServiceAccount only where the rule names it.
func ReviewPlan(rule *magosv1.ApprovalRule, p *magosv1.PlanStatus, entries []magosv1.Approval, approvedPlan string, now time.Time, maxAge time.Duration) Review {
	r := Review{Needed: 1, MaxAge: maxAge}
	var serviceAccounts []string
	if rule != nil {
		r.Rule, r.Auto, r.Groups = rule.Name, rule.AutoApprove, rule.Groups
		if rule.Approvals != nil {
			r.Needed = int(*rule.Approvals)
		}
		serviceAccounts = rule.ServiceAccounts
	}
	seen := map[string]bool{}
	for _, a := range entries {
		if !approves(a, p) || seen[a.User] {
			continue
		}
		seen[a.User] = true
		if sa := ServiceAccountOf(a.User); sa != "" && !slices.Contains(serviceAccounts, sa) {
			r.ServiceAccounts = append(r.ServiceAccounts, a.User)
			continue
		}
		if at := firstSeen(p, a.User); maxAge > 0 && at != nil {
			expires := at.Add(maxAge)
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
	if approvedPlan == p.ID && len(r.Groups) == 0 && len(r.Counted) == 0 {
		r.Counted = append(r.Counted, ApprovedPlanApprover)
	}
	return r
}

// WithFloor is r, the review under the Workspace's own rules, with floor,
// the review of the same plan under its Project's rules: the plan needs
// what both ask, and is applied without an approval only where both say
// so.
func (r Review) WithFloor(floor Review) Review {
	floor.project = true
	r.Floor = &floor
	if floor.Expires != nil && (r.Expires == nil || floor.Expires.Before(*r.Expires)) {
		r.Expires = floor.Expires
	}
	for _, u := range floor.Expired {
		if !slices.Contains(r.Expired, u) {
			r.Expired = append(r.Expired, u)
		}
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

// Satisfied says whether the plan may be applied: the rule's approvals
// (or its autoApprove), and the Project's floor's.
func (r Review) Satisfied() bool {
	return r.satisfiedHere() && (r.Floor == nil || r.Floor.Satisfied())
}

func (r Review) satisfiedHere() bool { return r.Auto || len(r.Counted) >= r.Needed }

// AutoApproved says whether the plan is applied without an approval: the
// governing rule says so, and so does the Project's.
func (r Review) AutoApproved() bool { return r.Auto && (r.Floor == nil || r.Floor.Auto) }

// RuleNames names the governing rules for status and events: "deletions",
// or "deletions, prod (Project)" with the Project's floor.
func (r Review) RuleNames() string {
	var names []string
	if r.Rule != "" {
		names = append(names, r.Rule)
	}
	if f := r.Floor; f != nil && f.Rule != "" {
		names = append(names, f.Rule+" (Project)")
	}
	return strings.Join(names, ", ")
}

// ruled says whether rules (not the one approval of a plan no rule
// governs) decide on the plan.
func (r Review) ruled() bool { return r.Rule != "" || r.Needed > 1 || r.Floor != nil }

// missing says what the plan still needs: "1 of 2 approvals (rule
// deletions), from members of platform-admins (bob is in none)", for the
// Workspace's rules and then the Project's floor.
func (r Review) missing() string {
	var parts []string
	if !r.satisfiedHere() {
		parts = append(parts, r.missingHere())
	}
	if f := r.Floor; f != nil && !f.Satisfied() {
		parts = append(parts, f.missingHere())
	}
	return strings.Join(parts, "; ")
}

func (r Review) missingHere() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d approvals", len(r.Counted), r.Needed)
	switch {
	case r.project && r.Rule != "":
		fmt.Fprintf(&b, " (the Project's rule %s)", r.Rule)
	case r.project:
		b.WriteString(" (the Project's rules)")
	case r.Rule != "":
		fmt.Fprintf(&b, " (rule %s)", r.Rule)
	}
	if len(r.Groups) > 0 {
		fmt.Fprintf(&b, ", from members of %s", strings.Join(r.Groups, " or "))
	}
	if len(r.Ignored) > 0 {
		fmt.Fprintf(&b, " (not counted: %s, in none of them)", strings.Join(r.Ignored, ", "))
	}
	if len(r.ServiceAccounts) > 0 {
		fmt.Fprintf(&b, " (not counted: %s, a ServiceAccount no rule names)", strings.Join(r.ServiceAccounts, ", "))
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

// EffectiveApproval is the approval mode of a Workspace that says mode
// ("" for none) in a Project whose resolved defaults are project (nil for
// none): the Workspace's, else the Project's, else Auto; but Manual,
// whatever the Workspace says, where the Project's defaults say Manual or
// name approval rules: they are a floor its Workspaces cannot lower.
func EffectiveApproval(mode magosv1.ApprovalMode, project *magosv1.ProjectDefaults) magosv1.ApprovalMode {
	switch {
	case project != nil && (project.Approval == magosv1.ApprovalManual || len(project.ApprovalRules) > 0):
		return magosv1.ApprovalManual
	case mode != "":
		return mode
	case project != nil && project.Approval != "":
		return project.Approval
	}
	return magosv1.ApprovalAuto
}

// EffectiveApprovalMaxAge is how long an approval counts (0: for ever)
// for a Workspace asking workspace in a Project asking project: the
// shorter of the two that are set; a Workspace cannot make its Project's
// approvals last longer.
func EffectiveApprovalMaxAge(workspace, project time.Duration) time.Duration {
	if workspace > 0 && (project == 0 || workspace < project) {
		return workspace
	}
	return project
}
