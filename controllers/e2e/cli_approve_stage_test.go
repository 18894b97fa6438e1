package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestCLIApproveStage: one review for a Rollout stage. Of stage prod's
// three Workspaces, prod-a and prod-b plan the same change and prod-c
// another. approve --stage refuses to approve two different changes at
// once and names them; --like prod-a approves prod-a and prod-b, each in
// an entry naming its own plan, and they apply; prod-c still awaits its
// own review. kubectl magos tree shows, for the stage, how many distinct
// changes its plans make and who approved them.
func TestCLIApproveStage(t *testing.T) {
	f := newRolloutFixture(t, 3, []magosv1.Stage{{Name: "prod", Selector: envSelector("prod")}}, func(ws *magosv1.Workspace) {
		ws.Spec.Approval = magosv1.ApprovalManual
		if ws.Name == "prod-c" {
			ws.Spec.Vars = []magosv1.Variable{{Name: "stage", Value: ptr.To("prod-eu")}}
		}
	})
	rev := f.commit("v1")
	for _, name := range f.stages[0] {
		f.waitWorkspace(name, 3*time.Minute, "awaits approval", func(ws *magosv1.Workspace) bool {
			return ws.Status.Phase == magosv1.PhaseAwaitingApproval && ws.Status.Plan != nil && ws.Status.Plan.Revision == rev
		})
	}
	f.waitRollout(time.Minute, "lists prod's Workspaces", func(ro *magosv1.Rollout) bool {
		return len(ro.Status.Stages) == 1 && len(ro.Status.Stages[0].Workspaces) == 3
	})

	r := f.magos("tree", "app")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Regexp(t, `Stage prod: .*; 3 Workspaces, 2 distinct plans; 3 awaiting approval\n`, r.stdout)

	r = f.magos("approve", "--stage", "release/prod")
	require.Equal(t, 1, r.code, "%s", r)
	assert.Contains(t, r.stdout, "Stage prod of Rollout release: 3 Workspace(s), 3 awaiting approval, 2 distinct plan(s)")
	assert.Contains(t, r.stdout, "  prod-a, prod-b\n  prod-c\n")
	assert.Contains(t, r.stderr, "the stage's plans are 2 different changes")
	for _, name := range f.stages[0] {
		assert.Empty(t, f.workspace(name).Spec.Approvals, "nothing approved")
	}

	r = f.magos("plan", "diff", "prod-c", "--against", "prod-a", "--ignore-attributes", "input")
	require.Equal(t, 0, r.code, "prod-c differs only in its input: %s", r)
	assert.Contains(t, r.stdout, "(not comparing input):")
	r = f.magos("approve", "prod-c", "--ignore-attributes", "input")
	assert.Equal(t, 2, r.code, "%s", r)

	r = f.magos("approve", "--stage", "release/prod", "--like", "prod-a")
	require.Equal(t, 0, r.code, "%s", r)
	for _, name := range []string{"prod-a", "prod-b"} {
		ws := f.workspace(name)
		require.Len(t, ws.Spec.Approvals, 1)
		assert.Equal(t, ws.Status.Plan.ID, ws.Spec.Approvals[0].Plan, "%s's entry names its own plan", name)
		assert.Equal(t, ws.Status.Plan.Digest, ws.Spec.Approvals[0].Digest)
		assert.True(t, strings.Contains(r.stdout, "Workspace "+name+": plan "+ws.Status.Plan.ID+" approved by "), "%s", r)
		f.waitWorkspace(name, 3*time.Minute, "applies", appliedRevision(rev))
	}
	assert.Empty(t, f.workspace("prod-c").Spec.Approvals)
	assert.Equal(t, magosv1.PhaseAwaitingApproval, f.workspace("prod-c").Status.Phase)

	approver := f.workspace("prod-a").Spec.Approvals[0].User
	r = f.magos("tree", "app")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Contains(t, r.stdout, "; 3 Workspaces, 2 distinct plans, approved by "+approver+"; 1 awaiting approval\n",
		"the stage says how many changes it holds and who approved them")
}
