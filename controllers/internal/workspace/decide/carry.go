package decide

import (
	"fmt"
	"strings"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// A monorepo commit to envs/dev gives every Workspace of the repository a
// new revision; the Workspace at envs/prod is not planned again for it.
// The controller digests every byte a Workspace's plan can depend on in an
// artifact (configtree: its path, the local modules it calls, the files
// its configuration reads, links, spec.triggerPaths) when it starts a
// plan (PlanStatus.ContentDigest), and again for a new revision when that
// is all that would make it plan (MayCarry). An equal digest carries the
// plan over to the new revision, applied or not: status says so
// (PlanStatus.PlannedRevision, a RevisionUnchanged event), a Rollout sees
// the Workspace at the new revision, and a plan awaiting approval,
// promotion or a waiver keeps its ID, approvals and verdict. A digest the
// controller cannot know (ContentCheck.Unknown) carries nothing.

// ContentCheck is what the Workspace reads in the artifact of
// facts.Revision.
type ContentCheck struct {
	// Digest of the bytes read; "" when unknown (nothing carries).
	Digest string
	// Dirs are the directories and files read, the Workspace's path first.
	Dirs []string
	// Unknown says why Digest is "".
	Unknown string
	// Refused is set when a configuration file the Workspace reads is
	// beyond what the controller parses: no plan starts (Stalled,
	// ConfigurationRefused) until a revision changes it.
	Refused string
}

// MayCarry says whether only the revision stands between the plan and a
// current one (PlanCurrent): same inputs, plan mode and no plan request,
// not deleting, and what the plan read known. The plan may be applied,
// recorded without changes, or pending (awaiting approval, promotion, a
// waiver, or reported by a PlanOnly Workspace).
func (f Facts) MayCarry() bool {
	p := f.Plan
	return p != nil && p.ContentDigest != "" && p.Revision != f.Revision && p.InputsDigest == f.Inputs &&
		p.Mode == f.planMode() && f.Request == nil && f.Deletion == nil
}

// carries says whether the plan stands for f.Revision: only the revision
// changed, and none of the bytes the plan can depend on.
func (f Facts) carries() bool {
	return f.MayCarry() && f.Content != nil && f.Content.Digest != "" && f.Content.Digest == f.Plan.ContentDigest
}

// carryDecision carries the plan over to f.Revision.
func carryDecision(f Facts) Decision {
	return Decision{Phase: magosv1.PhaseIdle, Action: ActCarryRevision, Message: carriedMessage(f)}
}

// CarriesPending says whether the plan a carry decision carries is not
// applied: what decides on it (gate, Rollout, approvals) is asked again
// for the new revision.
func (f Facts) CarriesPending() bool {
	return f.Applied == nil || f.Applied.PlanID != f.Plan.ID
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
	if f.CarriesPending() {
		return fmt.Sprintf("Revision %s changes nothing the Workspace reads (%s): pending plan %s of revision %s stands for it, with its approvals",
			f.Revision, read, f.Plan.ID, planned)
	}
	return fmt.Sprintf("Revision %s changes nothing the Workspace reads (%s): plan %s of revision %s stands, nothing is planned",
		f.Revision, read, f.Plan.ID, planned)
}

// refusedDecision stalls a plan whose configuration the controller will
// not parse.
func refusedDecision(f Facts) Decision {
	return Decision{Phase: magosv1.PhaseFailed, Reason: magosv1.ReasonConfigurationRefused, Stalled: true,
		Message: fmt.Sprintf("Revision %s is not planned: %s", f.Revision, f.Content.Refused)}
}

// Carry records in status that the plan stands for revision (and, when
// it is applied, that revision is applied).
func Carry(st *magosv1.WorkspaceStatus, revision string) {
	p := st.Plan
	if p.PlannedRevision == "" {
		p.PlannedRevision = p.Revision
	}
	p.Revision = revision
	if a := st.LastApplied; a != nil && a.PlanID == p.ID {
		a.Revision = revision
	}
}
