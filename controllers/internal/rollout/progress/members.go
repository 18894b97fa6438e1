package rollout

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
)

// member is what a Rollout reads of one Workspace's status.
type member struct {
	Name            string
	AppliedRevision string
	AppliedAt       *metav1.Time
	Ready           bool
	Phase           magosv1.WorkspacePhase
	// Failing is set when the Workspace failed on the revision being rolled
	// out (a failed run, a policy verdict, a stalled reconcile); Message
	// says why.
	Failing bool
	Message string
}

// done reports whether the member applied revision and is Ready.
func (m member) done(revision string) bool {
	return m.AppliedRevision == revision && m.Ready
}

// memberOf reads ws as a member rolling out revision.
func memberOf(ws *magosv1.Workspace, revision string) member {
	m := member{Name: ws.Name, Phase: ws.Status.Phase}
	if a := ws.Status.LastApplied; a != nil {
		m.AppliedRevision, m.AppliedAt = a.Revision, a.Time.DeepCopy()
	}
	ready := conditions.Get(ws, magosv1.ReadyCondition)
	m.Ready = ready != nil && ready.Status == metav1.ConditionTrue && ws.Status.ObservedGeneration == ws.Generation
	if revision == "" || m.done(revision) {
		return m
	}
	// A stalled Workspace needs a person whatever it was doing; a failed
	// run or policy verdict counts when it was about this revision.
	if stalled := conditions.Get(ws, magosv1.StalledCondition); stalled != nil && stalled.Status == metav1.ConditionTrue {
		m.Failing, m.Message = true, stalled.Reason+": "+stalled.Message
	} else if ws.Status.Phase == magosv1.PhaseFailed && ready != nil && workingOn(ws, revision) {
		m.Failing, m.Message = true, ready.Reason+": "+ready.Message
	}
	return m
}

// workingOn reports whether ws's current plan or newest run is for revision.
func workingOn(ws *magosv1.Workspace, revision string) bool {
	st := ws.Status
	if st.Plan != nil && st.Plan.Revision == revision {
		return true
	}
	last := st.LastRun()
	return last != nil && last.Revision == revision
}

// staging is the Project's Workspaces sorted into a Rollout's stages.
type staging struct {
	// Stages holds the members of each spec stage, by name.
	Stages [][]*magosv1.Workspace
	// Unstaged are the Workspaces no stage selects.
	Unstaged []string
	// Sources are the distinct sources the Workspaces read.
	Sources []string
}

// stageWorkspaces puts each Workspace into the first stage whose selector
// matches its labels. An invalid selector is an error naming the stage.
func stageWorkspaces(stages []magosv1.Stage, workspaces []magosv1.Workspace) (staging, error) {
	selectors := make([]labels.Selector, len(stages))
	for i, st := range stages {
		sel, err := metav1.LabelSelectorAsSelector(&st.Selector)
		if err != nil {
			return staging{}, fmt.Errorf("stage %s: invalid selector: %w", st.Name, err)
		}
		selectors[i] = sel
	}
	out := staging{Stages: make([][]*magosv1.Workspace, len(stages))}
	sorted := make([]*magosv1.Workspace, len(workspaces))
	for i := range workspaces {
		sorted[i] = &workspaces[i]
	}
	slices.SortFunc(sorted, func(a, b *magosv1.Workspace) int { return strings.Compare(a.Name, b.Name) })
	for _, ws := range sorted {
		if !ws.DeletionTimestamp.IsZero() {
			continue
		}
		if key := fluxsource.KeyOf(ws); !slices.Contains(out.Sources, key) {
			out.Sources = append(out.Sources, key)
		}
		i := slices.IndexFunc(selectors, func(s labels.Selector) bool { return s.Matches(labels.Set(ws.Labels)) })
		if i < 0 {
			out.Unstaged = append(out.Unstaged, ws.Name)
			continue
		}
		out.Stages[i] = append(out.Stages[i], ws)
	}
	slices.Sort(out.Sources)
	return out, nil
}
