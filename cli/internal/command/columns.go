package command

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// none is what an empty cell shows.
const none = "-"

// workspaceHeaders are the columns of workspaceRow.
var workspaceHeaders = []string{"NAME", "PHASE", "REVISION", "PLAN", "POLICY", "LOCK", "LAST RUN", "MESSAGE"}

// workspaceRow is one Workspace as a table row, ages relative to now.
func workspaceRow(ws *magosv1.Workspace, now time.Time) []string {
	st := &ws.Status
	phase := string(st.Phase)
	if ws.Spec.Suspend {
		phase += " (suspended)"
	}
	rev := none
	if st.Source != nil {
		rev = shortRevision(st.Source.Revision)
	}
	lock := none
	if st.Lock != nil {
		lock = st.Lock.Holder
	}
	return []string{ws.Name, orNone(phase), orNone(rev), planCounts(st.Plan), policyCell(st.Plan), lock,
		runCell(st, now), readyMessage(st.Conditions)}
}

// workspaceWideHeaders are the columns of workspaceWide.
var workspaceWideHeaders = []string{"APPROVED BY", "PLAN ID"}

// workspaceWide is the columns -o wide adds for a Workspace.
func workspaceWide(ws *magosv1.Workspace) []string {
	id := none
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
		return none
	}
	var users []string
	for _, a := range p.Approvals {
		users = append(users, a.User)
	}
	if len(users) == 0 && ws.Spec.ApprovedPlan == p.ID {
		return "spec.approvedPlan"
	}
	if len(users) == 0 {
		return none
	}
	return strings.Join(users, ",")
}

// planCounts is "+add ~change -destroy" of a plan.
func planCounts(p *magosv1.PlanStatus) string {
	if p == nil {
		return none
	}
	return fmt.Sprintf("+%d ~%d -%d", p.Add, p.Change, p.Destroy)
}

// policyCell is the policy verdict of a plan: Passed, or Failed with the
// number of violations.
func policyCell(p *magosv1.PlanStatus) string {
	switch {
	case p == nil || p.Policy == nil:
		return none
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
		return none
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

// projectHeaders are the columns of projectRow.
var projectHeaders = []string{"NAME", "WORKSPACES", "READY", "FAILED", "DRIFTED", "AWAITING APPROVAL", "MESSAGE"}

// projectRow is one Project as a table row.
func projectRow(p *magosv1.Project) []string {
	w := p.Status.Workspaces
	return []string{p.Name, fmt.Sprint(w.Total), fmt.Sprint(w.Ready), fmt.Sprint(w.Failed), fmt.Sprint(w.Drifted),
		fmt.Sprint(w.AwaitingApproval), readyMessage(p.Status.Conditions)}
}

// rolloutHeaders are the columns of rolloutRow.
var rolloutHeaders = []string{"NAME", "PROJECT", "REVISION", "STAGES", "MESSAGE"}

// rolloutRow is one Rollout as a table row; STAGES is name:phase of each.
func rolloutRow(ro *magosv1.Rollout) []string {
	stages := make([]string, 0, len(ro.Status.Stages))
	for _, s := range ro.Status.Stages {
		stages = append(stages, fmt.Sprintf("%s:%s", s.Name, s.Phase))
	}
	project := ro.Spec.ProjectRef.Name
	if ro.Spec.Suspend {
		project += " (suspended)"
	}
	return []string{ro.Name, project, orNone(shortRevision(ro.Status.Revision)), orNone(strings.Join(stages, ",")),
		readyMessage(ro.Status.Conditions)}
}

// workspaceSetHeaders are the columns of workspaceSetRow.
var workspaceSetHeaders = []string{"NAME", "ELEMENTS", "WORKSPACES", "READY", "DELETION", "MESSAGE"}

// workspaceSetRow is one WorkspaceSet as a table row.
func workspaceSetRow(set *magosv1.WorkspaceSet) []string {
	st := set.Status
	policy := string(set.Spec.DeletionPolicy)
	if policy == "" {
		policy = string(magosv1.DeletionOrphan)
	}
	return []string{set.Name, fmt.Sprint(st.Elements), fmt.Sprint(st.Workspaces), fmt.Sprint(st.Ready), policy, readyMessage(st.Conditions)}
}

// shortRevision shortens the hash of a Flux revision (main@sha1:<40 hex>)
// to 12 characters; other revisions are kept.
func shortRevision(rev string) string {
	i := strings.LastIndex(rev, ":")
	if i < 0 || len(rev)-i-1 <= 12 {
		return rev
	}
	return rev[:i+1+12]
}

// readyMessage is the Ready condition's message on one line, or "-".
func readyMessage(conds []metav1.Condition) string {
	c := meta.FindStatusCondition(conds, magosv1.ReadyCondition)
	if c == nil {
		return none
	}
	return orNone(strings.Join(strings.Fields(c.Message), " "))
}

// age is how long ago t was, as kubectl prints it, or "" without t.
func age(t *metav1.Time, now time.Time) string {
	if t == nil {
		return ""
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}
