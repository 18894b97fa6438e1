package view

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// None is what an empty cell shows.
const None = "-"

// WorkspaceHeaders are the columns of WorkspaceRow.
var WorkspaceHeaders = []string{"NAME", "PHASE", "REVISION", "PLAN", "POLICY", "LOCK", "LAST RUN", "MESSAGE"}

// WorkspaceRow is one Workspace as a table row, ages relative to now.
func WorkspaceRow(ws *magosv1.Workspace, now time.Time) []string {
	st := &ws.Status
	phase := string(st.Phase)
	if ws.Spec.Suspend {
		phase += " (suspended)"
	}
	rev := None
	if st.Source != nil {
		rev = ShortRevision(st.Source.Revision)
	}
	lock := None
	if st.Lock != nil {
		lock = st.Lock.Holder
	}
	return []string{ws.Name, OrNone(phase), OrNone(rev), PlanCounts(st.Plan), policyCell(st.Plan), lock,
		runCell(st, now), ReadyMessage(st.Conditions)}
}

// WorkspaceWideHeaders are the columns of WorkspaceWide.
var WorkspaceWideHeaders = []string{"APPROVED BY", "PLAN ID"}

// WorkspaceWide is the columns -o wide adds for a Workspace.
func WorkspaceWide(ws *magosv1.Workspace) []string {
	id := None
	if p := ws.Status.Plan; p != nil {
		id = p.ID
	}
	return []string{approvedBy(ws), id}
}

// approvedBy names who approved the Workspace's plan: the users of
// status.plan.approvals, or spec.approvedPlan when only it names the plan.
func approvedBy(ws *magosv1.Workspace) string {
	p := ws.Status.Plan
	if p == nil {
		return None
	}
	var users []string
	for _, a := range p.Approvals {
		users = append(users, a.User)
	}
	if len(users) == 0 && ws.Spec.ApprovedPlan == p.ID {
		return "spec.approvedPlan"
	}
	if len(users) == 0 {
		return None
	}
	return strings.Join(users, ",")
}

// PlanCounts is "+add ~change -destroy" of a plan.
func PlanCounts(p *magosv1.PlanStatus) string {
	if p == nil {
		return None
	}
	return fmt.Sprintf("+%d ~%d -%d", p.Add, p.Change, p.Destroy)
}

// policyCell is the policy verdict of a plan: Passed, or Failed with the
// number of violations.
func policyCell(p *magosv1.PlanStatus) string {
	switch {
	case p == nil || p.Policy == nil:
		return None
	case p.Policy.Passed:
		return "Passed"
	default:
		return fmt.Sprintf("Failed (%d)", len(p.Policy.Violations))
	}
}

// runCell is the current run, else the newest finished one, with its age:
// "apply Succeeded 5m".
func runCell(st *magosv1.WorkspaceStatus, now time.Time) string {
	r := st.CurrentRun
	if r == nil {
		r = st.LastRun()
	}
	if r == nil {
		return None
	}
	result := r.Result
	if result == "" && st.CurrentRun != nil {
		result = magosv1.ResultRunning
	}
	at := r.Finished
	if at == nil {
		at = r.Started
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s %s", r.Phase, result, age(at, now)))
}

// ProjectHeaders are the columns of ProjectRow.
var ProjectHeaders = []string{"NAME", "WORKSPACES", "READY", "FAILED", "DRIFTED", "AWAITING APPROVAL", "MESSAGE"}

// ProjectRow is one Project as a table row.
func ProjectRow(p *magosv1.Project) []string {
	w := p.Status.Workspaces
	return []string{p.Name, fmt.Sprint(w.Total), fmt.Sprint(w.Ready), fmt.Sprint(w.Failed), fmt.Sprint(w.Drifted),
		fmt.Sprint(w.AwaitingApproval), ReadyMessage(p.Status.Conditions)}
}

// RolloutHeaders are the columns of RolloutRow.
var RolloutHeaders = []string{"NAME", "PROJECT", "REVISION", "STAGES", "MESSAGE"}

// RolloutRow is one Rollout as a table row; STAGES is name:phase of each.
func RolloutRow(ro *magosv1.Rollout) []string {
	stages := make([]string, 0, len(ro.Status.Stages))
	for _, s := range ro.Status.Stages {
		stages = append(stages, fmt.Sprintf("%s:%s", s.Name, s.Phase))
	}
	project := ro.Spec.ProjectRef.Name
	if ro.Spec.Suspend {
		project += " (suspended)"
	}
	return []string{ro.Name, project, OrNone(ShortRevision(ro.Status.Revision)), OrNone(strings.Join(stages, ",")),
		ReadyMessage(ro.Status.Conditions)}
}

// WorkspaceSetHeaders are the columns of WorkspaceSetRow.
var WorkspaceSetHeaders = []string{"NAME", "ELEMENTS", "WORKSPACES", "READY", "DELETION", "MESSAGE"}

// WorkspaceSetRow is one WorkspaceSet as a table row.
func WorkspaceSetRow(set *magosv1.WorkspaceSet) []string {
	st := set.Status
	policy := string(set.Spec.DeletionPolicy)
	if policy == "" {
		policy = string(magosv1.DeletionOrphan)
	}
	return []string{set.Name, fmt.Sprint(st.Elements), fmt.Sprint(st.Workspaces), fmt.Sprint(st.Ready), policy, ReadyMessage(st.Conditions)}
}

// ShortRevision shortens the hash of a Flux revision (main@sha1:<40 hex>)
// to 12 characters; other revisions are kept.
func ShortRevision(rev string) string {
	i := strings.LastIndex(rev, ":")
	if i < 0 || len(rev)-i-1 <= 12 {
		return rev
	}
	return rev[:i+1+12]
}

// ReadyMessage is the Ready condition's message on one line, or "-".
func ReadyMessage(conds []metav1.Condition) string {
	c := meta.FindStatusCondition(conds, magosv1.ReadyCondition)
	if c == nil {
		return None
	}
	return OrNone(strings.Join(strings.Fields(c.Message), " "))
}

// age is how long ago t was, as kubectl prints it, or "" without t.
func age(t *metav1.Time, now time.Time) string {
	if t == nil {
		return ""
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func OrNone(s string) string {
	if s == "" {
		return None
	}
	return s
}
