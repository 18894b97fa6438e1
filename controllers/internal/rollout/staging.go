package rollout

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/fluxsource"
)

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
