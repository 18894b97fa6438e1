package view

import (
	"fmt"
	"io"
	"slices"
	"strings"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// StageReview is what the review of a stage's plans found: how many
// Workspaces the stage holds, how many distinct changes the current plans
// with changes make (or why that is unknown), who approved them and how
// many await approval.
type StageReview struct {
	Workspaces int
	// Counted is how many of them have a plan with changes; Distinct how
	// many distinct changes those plans make, unless DistinctErr says why
	// that is unknown.
	Counted, Distinct int
	DistinctErr       error
	Approvers         []string
	Awaiting          int
}

// StageReviewLine says how many distinct changes the current plans of a
// stage's Workspaces make, who approved them and how many still await
// approval, e.g. "3 Workspaces, 1 distinct plan, approved by alice; 1
// awaiting approval"; "" for a stage without plans with changes.
func StageReviewLine(r StageReview) string {
	if r.Counted == 0 && r.DistinctErr == nil {
		return ""
	}
	s := countOf(r.Workspaces, "Workspace", "Workspaces")
	if r.DistinctErr != nil {
		s += ", distinct plans unknown (" + strings.Join(strings.Fields(r.DistinctErr.Error()), " ") + ")"
	} else {
		s += ", " + countOf(r.Distinct, "distinct plan", "distinct plans")
	}
	approvers := slices.Clone(r.Approvers)
	slices.Sort(approvers)
	if approvers = slices.Compact(approvers); len(approvers) > 0 {
		s += ", approved by " + strings.Join(approvers, ", ")
	}
	if r.Awaiting > 0 {
		s += fmt.Sprintf("; %d awaiting approval", r.Awaiting)
	}
	return s
}

// countOf renders n with the singular or plural noun.
func countOf(n int, singular, plural string) string {
	if n == 1 {
		return "1 " + singular
	}
	return fmt.Sprintf("%d %s", n, plural)
}

// WriteTree writes the Project, each Rollout on it with its stages and
// their Workspaces, and the Project's Workspaces no stage holds.
func WriteTree(w io.Writer, p *magosv1.Project, rollouts []magosv1.Rollout, workspaces []magosv1.Workspace, reviews map[string]string) {
	members := map[string]*magosv1.Workspace{}
	var names []string
	for i := range workspaces {
		ws := &workspaces[i]
		if ws.Spec.ProjectRef != nil && ws.Spec.ProjectRef.Name == p.Name {
			members[ws.Name] = ws
			names = append(names, ws.Name)
		}
	}
	slices.Sort(names)
	wsw := p.Status.Workspaces
	fmt.Fprintf(w, "Project %s: %d Workspaces, %d ready, %d failed: %s\n", p.Name, wsw.Total, wsw.Ready, wsw.Failed, ReadyMessage(p.Status.Conditions))
	staged := map[string]bool{}
	for _, ro := range rollouts {
		if ro.Spec.ProjectRef.Name != p.Name {
			continue
		}
		fmt.Fprintf(w, "  Rollout %s, revision %s: %s\n", ro.Name, OrNone(ro.Status.Revision), ReadyMessage(ro.Status.Conditions))
		for _, st := range ro.Status.Stages {
			review := ""
			if r := reviews[ro.Name+"/"+st.Name]; r != "" {
				review = "; " + r
			}
			fmt.Fprintf(w, "    Stage %s: %s, admitted %s%s\n", st.Name, st.Phase, OrNone(st.AdmittedRevision), review)
			for _, sw := range st.Workspaces {
				staged[sw.Name] = true
				writeTreeWorkspace(w, "      ", sw.Name, members[sw.Name])
			}
		}
	}
	header := false
	for _, n := range names {
		if staged[n] {
			continue
		}
		if !header {
			fmt.Fprintln(w, "  Workspaces outside any stage:")
			header = true
		}
		writeTreeWorkspace(w, "    ", n, members[n])
	}
}

func writeTreeWorkspace(w io.Writer, indent, name string, ws *magosv1.Workspace) {
	if ws == nil {
		fmt.Fprintf(w, "%sWorkspace %s: not found\n", indent, name)
		return
	}
	applied := None
	if a := ws.Status.LastApplied; a != nil {
		applied = a.Revision
		if p := ws.Status.Plan; p != nil && p.ID == a.PlanID && p.PlannedRevision != "" && p.PlannedRevision != a.Revision {
			// The revision changes nothing the plan read: it stands for it.
			applied += " (carried: planned at " + p.PlannedRevision + ")"
		}
	}
	from := ""
	if set := ws.Labels[magosv1.WorkspaceSetLabel]; set != "" {
		from = " (WorkspaceSet " + set + ")"
	}
	fmt.Fprintf(w, "%sWorkspace %s%s: %s, applied %s: %s\n", indent, name, from, OrNone(string(ws.Status.Phase)), applied, ReadyMessage(ws.Status.Conditions))
}
