package workspace_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// The counts and hasChanges an approver reads in status (and kubectl get
// shows) come from the plan JSON the controller read back from storage,
// not from the runner's report: the runner ran the configuration's code.
// A report that hides two deletions behind "1 to add" shows the deletions.
func TestPlanCountsComeFromTheStoredPlan(t *testing.T) {
	t.Parallel()
	f := newFixture(t, time.Minute)
	f.newWorkspace("counted", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	plan := waitJob(t, f.ns, "counted", magosv1.RunPlan)

	stored := magosv1.RunResult{Phase: magosv1.RunPlan, Result: magosv1.ResultSucceeded, PlanDigest: "sha256:deletes", HasChanges: true, Destroy: 2}
	digest := storeReportedPlan(t, plan, stored)
	reportOnly(t, plan, magosv1.RunResult{Result: magosv1.ResultSucceeded, PlanDigest: digest, HasChanges: true, Add: 1, Storage: "plan"})

	ws := f.waitWorkspace("counted", "awaits approval", inPhase(magosv1.PhaseAwaitingApproval))
	p := ws.Status.Plan
	assert.Equal(t, [3]int32{0, 0, 2}, [3]int32{p.Add, p.Change, p.Destroy}, "the stored plan's counts")
	assert.True(t, p.HasChanges)
	assert.Equal(t, digest, p.Digest)
	assert.NotEmpty(t, p.BundleDigest, "the stored bundle's digest is recorded")
}
