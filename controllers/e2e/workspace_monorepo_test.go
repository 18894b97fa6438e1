package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestMonorepoPlansOnlyTheWorkspacesARevisionChanges: two Workspaces read
// envs/dev and envs/prod of one repository, both calling modules/net. A
// commit to envs/dev plans and applies dev; prod takes the new revision
// without a run, says why (status.plan.plannedRevision, a RevisionUnchanged
// event) and a Rollout would see it at the new revision. A README change
// plans neither; a change to the module both call plans both.
func TestMonorepoPlansOnlyTheWorkspacesARevisionChanges(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	repo := copyConfig(t, "monorepo")
	rev1 := s.gitRepository("infra", repo)
	for _, env := range []string{"dev", "prod"} {
		s.newWorkspace(env, "infra", func(ws *magosv1.Workspace) { ws.Spec.Path = "envs/" + env })
	}
	runs := map[string]int64{}
	for _, name := range []string{"dev", "prod"} {
		ws := s.waitWorkspace(name, 3*time.Minute, "applies the first revision", appliedRevision(rev1))
		require.NotEmpty(t, ws.Status.Plan.ContentDigest, "the plan records what it read")
		runs[name] = ws.Status.Runs
	}
	assertOutput(t, s.ns, "prod-outputs", "network", "net-prod")

	// A commit to envs/dev.
	editConfig(t, filepath.Join(repo, "envs", "dev"), `name   = "dev"`, `name   = "dev-2"`)
	rev2 := s.publish("infra", repo)
	dev := s.waitWorkspace("dev", 3*time.Minute, "applies the commit to envs/dev", appliedRevision(rev2))
	assert.Equal(t, runs["dev"]+1, dev.Status.Runs, "dev ran once for its change")
	assertOutput(t, s.ns, "dev-outputs", "network", "net-dev-2")
	runs["dev"] = dev.Status.Runs
	prod := s.waitWorkspace("prod", time.Minute, "takes the revision without a run", appliedRevision(rev2))
	assert.Equal(t, runs["prod"], prod.Status.Runs, "prod did not run")
	assert.Equal(t, rev2, prod.Status.Plan.Revision)
	assert.Equal(t, rev1, prod.Status.Plan.PlannedRevision, "status names the revision the plan was made from")
	requireEvent(t, s.ns, "prod", magosv1.ReasonRevisionUnchanged)
	assert.Contains(t, eventMessage(t, s.ns, "prod", magosv1.ReasonRevisionUnchanged),
		"Revision "+rev2+" changes nothing the Workspace reads (envs/prod, modules/net)")

	// A README change: neither runs.
	require.NoError(t, os.WriteFile(filepath.Join(repo, "README.md"), []byte("# Infrastructure, described anew\n"), 0o600))
	rev3 := s.publish("infra", repo)
	for _, name := range []string{"dev", "prod"} {
		ws := s.waitWorkspace(name, time.Minute, "takes the README commit without a run", appliedRevision(rev3))
		assert.Equal(t, runs[name], ws.Status.Runs, "%s did not run", name)
	}

	// A change to the module both call: both plan and apply.
	editConfig(t, filepath.Join(repo, "modules", "net"), `input = "net-${var.name}"`, `input = "network-${var.name}"`)
	rev4 := s.publish("infra", repo)
	for _, name := range []string{"dev", "prod"} {
		ws := s.waitWorkspace(name, 3*time.Minute, "applies the module's change", appliedRevision(rev4))
		assert.Equal(t, runs[name]+1, ws.Status.Runs, "%s ran once for the module's change", name)
		assert.Empty(t, ws.Status.Plan.PlannedRevision, "a new plan is of its own revision")
	}
	assertOutput(t, s.ns, "prod-outputs", "network", "network-prod")
}
