package command

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

func newTreeCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "tree PROJECT",
		Short: "Show a Project, its Rollouts' stages and its Workspaces with their status",
		Example: `  kubectl magos tree app
  kubectl magos tree app -n infra`,
		Args: args(1, 1),
		RunE: func(cmd *cobra.Command, a []string) error { return tree(cmd.Context(), f, a[0]) },
	}
}

func tree(ctx context.Context, f *factory, name string) error {
	t, err := targetOf(f, name)
	if err != nil {
		return err
	}
	p := &magosv1.Project{}
	if err := t.get(ctx, p); err != nil {
		return err
	}
	var ros magosv1.RolloutList
	var wss magosv1.WorkspaceList
	for _, l := range []client.ObjectList{&ros, &wss} {
		if err := t.c.List(ctx, l, client.InNamespace(t.key.Namespace)); err != nil {
			return err
		}
	}
	reviews := map[string]string{}
	for _, ro := range ros.Items {
		for _, st := range ro.Status.Stages {
			reviews[ro.Name+"/"+st.Name] = stageReview(ctx, t, st)
		}
	}
	writeTree(f.streams.Out, p, ros.Items, wss.Items, reviews)
	return nil
}

// stageReview says how many distinct changes the current plans of a
// stage's Workspaces make, who approved them and how many still await
// approval, e.g. "3 Workspaces, 1 distinct plan, approved by alice; 1
// awaiting approval"; "" for a stage without plans with changes.
func stageReview(ctx context.Context, t *target, st magosv1.StageStatus) string {
	var members []string
	for _, w := range st.Workspaces {
		members = append(members, w.Name)
	}
	var approvers []string
	awaiting := 0
	withChanges := func(ws *magosv1.Workspace) bool {
		p := ws.Status.Plan
		if p == nil || !p.HasChanges {
			return false
		}
		if ws.Status.Phase == magosv1.PhaseAwaitingApproval {
			awaiting++
		}
		for _, a := range p.Approvals {
			approvers = append(approvers, a.User)
		}
		return true
	}
	groups, counted, err := distinctPlans(ctx, t, members, withChanges, nil)
	if counted == 0 && err == nil {
		return ""
	}
	s := countOf(len(members), "Workspace", "Workspaces")
	if err != nil {
		s += ", distinct plans unknown (" + strings.Join(strings.Fields(err.Error()), " ") + ")"
	} else {
		s += ", " + countOf(len(groups), "distinct plan", "distinct plans")
	}
	slices.Sort(approvers)
	if approvers = slices.Compact(approvers); len(approvers) > 0 {
		s += ", approved by " + strings.Join(approvers, ", ")
	}
	if awaiting > 0 {
		s += fmt.Sprintf("; %d awaiting approval", awaiting)
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

// writeTree writes the Project, each Rollout on it with its stages and
// their Workspaces, and the Project's Workspaces no stage holds.
func writeTree(w io.Writer, p *magosv1.Project, rollouts []magosv1.Rollout, workspaces []magosv1.Workspace, reviews map[string]string) {
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
	fmt.Fprintf(w, "Project %s: %d Workspaces, %d ready, %d failed: %s\n", p.Name, wsw.Total, wsw.Ready, wsw.Failed, readyMessage(p.Status.Conditions))
	staged := map[string]bool{}
	for _, ro := range rollouts {
		if ro.Spec.ProjectRef.Name != p.Name {
			continue
		}
		fmt.Fprintf(w, "  Rollout %s, revision %s: %s\n", ro.Name, orNone(ro.Status.Revision), readyMessage(ro.Status.Conditions))
		for _, st := range ro.Status.Stages {
			review := ""
			if r := reviews[ro.Name+"/"+st.Name]; r != "" {
				review = "; " + r
			}
			fmt.Fprintf(w, "    Stage %s: %s, admitted %s%s\n", st.Name, st.Phase, orNone(st.AdmittedRevision), review)
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
	applied := none
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
	fmt.Fprintf(w, "%sWorkspace %s%s: %s, applied %s: %s\n", indent, name, from, orNone(string(ws.Status.Phase)), applied, readyMessage(ws.Status.Conditions))
}
