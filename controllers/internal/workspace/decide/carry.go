package decide

import (
	"fmt"
	"strings"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// A monorepo commit to envs/dev gives every Workspace of the repository a
// new revision; the Workspace at envs/prod is not planned again for it.
// The controller digests what a Workspace reads in an artifact
// (configtree: its path's subtree and the local modules it calls) when
// it starts a plan (PlanStatus.ContentDigest), and again for a new
// revision when that is all that would make it plan (mayCarry). An equal
// digest carries the applied plan over to the new revision: status says
// so (PlanStatus.PlannedRevision, a RevisionUnchanged event) and a Rollout
// sees the Workspace at the new revision.

// ContentCheck is what the Workspace reads in the artifact of
// facts.Revision.
type ContentCheck struct {
	// Digest of the files read; "" when unknown (nothing carries).
	Digest string
	// Dirs are the directories read, the Workspace's path first.
	Dirs []string
}

// MayCarry says whether only the revision stands between the applied plan
// and a current one (planCurrent): same inputs, plan mode and no plan
// request, the plan applied (or recorded without changes), and what it
// read known.
func (f Facts) MayCarry() bool {
	p := f.Plan
	return p != nil && p.ContentDigest != "" && p.Revision != f.Revision && p.InputsDigest == f.Inputs &&
		p.Mode == f.planMode() && f.Request == nil && f.Deletion == nil &&
		f.Applied != nil && f.Applied.PlanID == p.ID
}

// carries says whether the applied plan stands for f.Revision: only the
// revision changed, and none of the files the Workspace reads.
func (f Facts) carries() bool {
	return f.MayCarry() && f.Content != nil && f.Content.Digest == f.Plan.ContentDigest
}

// carryDecision carries the applied plan over to f.Revision.
func carryDecision(f Facts) Decision {
	return Decision{Phase: magosv1.PhaseIdle, Action: ActCarryRevision, Message: carriedMessage(f)}
}

// carriedMessage says why f.Revision is not planned.
func carriedMessage(f Facts) string {
	read := "its path"
	if f.Content != nil && len(f.Content.Dirs) > 0 {
		read = strings.Join(f.Content.Dirs, ", ")
	}
	planned := f.Plan.Revision
	if f.Plan.PlannedRevision != "" {
		planned = f.Plan.PlannedRevision
	}
	return fmt.Sprintf("Revision %s changes nothing the Workspace reads (%s): plan %s of revision %s stands, nothing is planned",
		f.Revision, read, f.Plan.ID, planned)
}

// Carry records in status that the applied plan stands for revision.
func Carry(st *magosv1.WorkspaceStatus, revision string) {
	p := st.Plan
	if p.PlannedRevision == "" {
		p.PlannedRevision = p.Revision
	}
	p.Revision = revision
	st.LastApplied.Revision = revision
}
