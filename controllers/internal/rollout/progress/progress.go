package progress

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Facts is what one reconcile of a Rollout saw of its source and members.
type Facts struct {
	// Revision is the source artifact revision being rolled out.
	Revision string
	// Members holds each spec stage's members, sorted by name.
	Members [][]Member
	// Aborted is set when the abort annotation names Revision.
	Aborted bool
	Now     time.Time
}

// Result is the outcome of Stages.
type Result struct {
	Stages []magosv1.StageStatus
	// RequeueAfter is set while a stage bakes.
	RequeueAfter time.Duration
}

// Stages advances the Rollout's stages by one step from its previous
// status and what was observed. It is pure.
//
// A new revision restarts the rollout from the first stage: every stage
// loses its admission, so later stages never apply a revision earlier
// stages have not applied. Stage i is admitted when stage i-1 succeeded (the
// first stage at once), the Rollout is not suspended or aborted, and, for a
// Manual stage, spec.promotions names the stage and revision. An admitted
// stage is Halted while a member fails on the revision, Progressing until
// every member applied it and is Ready, Baking for bakeTime after that (a
// member no longer Ready restarts the bake) and then Succeeded, which
// stays. An aborted revision halts every stage that has not succeeded.
// Members join and leave stages as their labels change; a member
// joining a succeeded stage is admitted at once. A stage keeps its
// admission only while the previous one has succeeded, so a stage inserted
// or reordered by a spec change holds the stages after it.
func Stages(ro *magosv1.Rollout, o Facts) Result {
	restart := ro.Status.Revision != o.Revision
	prev := map[string]magosv1.StageStatus{}
	if !restart {
		for _, st := range ro.Status.Stages {
			prev[st.Name] = st
		}
	}
	out := Result{Stages: make([]magosv1.StageStatus, len(ro.Spec.Stages))}
	previousSucceeded := true
	for i, stage := range ro.Spec.Stages {
		p := prev[stage.Name]
		st := magosv1.StageStatus{Name: stage.Name, Workspaces: stageWorkspacesStatus(o.Members[i])}
		if p.AdmittedRevision == o.Revision && o.Revision != "" && previousSucceeded {
			st.AdmittedRevision, st.Started, st.Completed = p.AdmittedRevision, p.Started, p.Completed
		} else if admit, phase, msg := admission(ro, stage, o, previousSucceeded); admit {
			st.AdmittedRevision, st.Started = o.Revision, &metav1.Time{Time: o.Now}
		} else {
			st.Phase, st.Message = phase, msg
			out.Stages[i] = st
			previousSucceeded = false
			continue
		}
		wait := advanceStage(&st, p, stage, o.Members[i], o)
		if wait > 0 && (out.RequeueAfter == 0 || wait < out.RequeueAfter) {
			out.RequeueAfter = wait
		}
		out.Stages[i] = st
		previousSucceeded = st.Phase == magosv1.StageSucceeded
	}
	return out
}

// admission decides whether a stage not yet admitted for the revision is
// admitted now; if not, it says in which phase it waits and why.
func admission(ro *magosv1.Rollout, stage magosv1.Stage, o Facts, previousSucceeded bool) (bool, magosv1.StagePhase, string) {
	switch {
	case o.Revision == "":
		return false, magosv1.StagePending, "No revision to roll out yet"
	case o.Aborted:
		return false, magosv1.StageHalted, fmt.Sprintf("Revision %s was aborted; the stage keeps its applied revision", o.Revision)
	case !previousSucceeded:
		return false, magosv1.StagePending, fmt.Sprintf("Waits for the previous stage to succeed with revision %s", o.Revision)
	case ro.Spec.Suspend:
		return false, magosv1.StagePending, "The Rollout is suspended; no stage is admitted"
	case stage.Promotion == magosv1.PromotionManual && !promoted(ro, stage.Name, o.Revision):
		return false, magosv1.StageWaitingForPromotion, fmt.Sprintf(
			"Waits for promotion of revision %s: add {stage: %s, revision: %s} to spec.promotions", o.Revision, stage.Name, o.Revision)
	}
	return true, "", ""
}

// promoted reports whether spec.promotions approves revision for stage.
func promoted(ro *magosv1.Rollout, stage, revision string) bool {
	return slices.Contains(ro.Spec.Promotions, magosv1.Promotion{Stage: stage, Revision: revision})
}

// advanceStage sets the phase, admitted Workspaces and completion of an
// admitted stage and returns how long it still bakes.
func advanceStage(st *magosv1.StageStatus, prev magosv1.StageStatus, stage magosv1.Stage, members []Member, o Facts) time.Duration {
	var pending, failing []Member
	for _, m := range members {
		if m.Failing {
			failing = append(failing, m)
		}
		if !m.done(o.Revision) {
			pending = append(pending, m)
		}
	}
	succeeded := prev.Phase == magosv1.StageSucceeded && prev.AdmittedRevision == o.Revision
	switch {
	case succeeded:
		st.Phase = magosv1.StageSucceeded
		st.Message = fmt.Sprintf("Revision %s applied by all %d Workspaces", o.Revision, len(members))
		st.AdmittedWorkspaces = admitWorkspaces(prev.AdmittedWorkspaces, pending, stage.MaxParallel, true)
	case o.Aborted:
		st.Phase, st.Completed = magosv1.StageHalted, nil
		st.Message = fmt.Sprintf("Revision %s was aborted: %d of %d Workspaces applied it; the others keep their applied revision",
			o.Revision, len(members)-len(pending), len(members))
	case len(failing) > 0:
		st.Phase, st.Completed = magosv1.StageHalted, nil
		st.Message = fmt.Sprintf("Halted: Workspace %s failed on revision %s: %s", failing[0].Name, o.Revision, failing[0].Message)
		if len(failing) > 1 {
			st.Message += fmt.Sprintf(" (and %d more failing)", len(failing)-1)
		}
		st.AdmittedWorkspaces = admitWorkspaces(prev.AdmittedWorkspaces, pending, stage.MaxParallel, false)
	case len(pending) == 0:
		if st.Completed == nil {
			st.Completed = &metav1.Time{Time: o.Now}
		}
		bake := time.Duration(0)
		if stage.BakeTime != nil {
			bake = stage.BakeTime.Duration
		}
		if left := st.Completed.Add(bake).Sub(o.Now); left > 0 {
			st.Phase = magosv1.StageBaking
			st.Message = fmt.Sprintf("All %d Workspaces applied revision %s; baking until %s",
				len(members), o.Revision, st.Completed.Add(bake).UTC().Format(time.RFC3339))
			return left
		}
		st.Phase = magosv1.StageSucceeded
		st.Message = fmt.Sprintf("Revision %s applied by all %d Workspaces", o.Revision, len(members))
	default:
		st.Phase, st.Completed = magosv1.StageProgressing, nil
		st.AdmittedWorkspaces = admitWorkspaces(prev.AdmittedWorkspaces, pending, stage.MaxParallel, true)
		st.Message = fmt.Sprintf("%d of %d Workspaces applied revision %s", len(members)-len(pending), len(members), o.Revision)
	}
	return 0
}

// admitWorkspaces names the members that may apply now: those admitted
// before that still have to apply (a slot is never taken away mid-apply),
// then, when fill is set, further pending members in name order up to
// maxParallel.
func admitWorkspaces(before []string, pending []Member, maxParallel *int32, fill bool) []string {
	var out []string
	for _, name := range before {
		if slices.ContainsFunc(pending, func(m Member) bool { return m.Name == name }) {
			out = append(out, name)
		}
	}
	for _, m := range pending {
		if !fill || (maxParallel != nil && len(out) >= int(*maxParallel)) {
			break
		}
		if !slices.Contains(out, m.Name) {
			out = append(out, m.Name)
		}
	}
	return out
}

// stageWorkspacesStatus is the status entry of each member.
func stageWorkspacesStatus(members []Member) []magosv1.StageWorkspace {
	out := make([]magosv1.StageWorkspace, 0, len(members))
	for _, m := range members {
		out = append(out, magosv1.StageWorkspace{
			Name: m.Name, AppliedRevision: m.AppliedRevision, AppliedAt: m.AppliedAt,
			Ready: m.Ready, Phase: m.Phase, Message: m.Message,
		})
	}
	return out
}
