package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// writeFile writes content to name under dir.
func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
}

// TestMonorepoPlansWhatTheConfigurationReads: a Workspace at envs/app
// reads shared files outside its path, by file() in its own
// configuration, by templatefile() in JSON syntax and by file() in a local
// module. A commit to a shared file nothing reads carries the revision
// without a run; a commit to each file read is planned and applied, and
// the outputs show the new content (before, each was carried as applied
// while the infrastructure kept the old content).
func TestMonorepoPlansWhatTheConfigurationReads(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	repo := copyConfig(t, "monorepo-reads")
	rev := s.gitRepository("infra", repo)
	s.newWorkspace("app", "infra", func(ws *magosv1.Workspace) { ws.Spec.Path = "envs/app" })
	ws := s.waitWorkspace("app", 3*time.Minute, "applies the first revision", appliedRevision(rev))
	runs := ws.Status.Runs
	assertOutput(t, s.ns, "app-outputs", "data", "one")
	assertOutput(t, s.ns, "app-outputs", "greeting", "hello app")
	assertOutput(t, s.ns, "app-outputs", "net", "10.0.0.0/16")

	writeFile(t, repo, "shared/unread.txt", "still nothing reads this\n")
	rev = s.publish("infra", repo)
	ws = s.waitWorkspace("app", time.Minute, "takes a commit to a file it does not read without a run", appliedRevision(rev))
	assert.Equal(t, runs, ws.Status.Runs)
	assert.Contains(t, eventMessage(t, s.ns, "app", magosv1.ReasonRevisionUnchanged), "shared/data.json")

	for _, tt := range []struct {
		file, content, output, value string
	}{
		{"shared/data.json", `{"name": "two"}`, "data", "two"},
		{"shared/greeting.tftpl", "hi ${name}", "greeting", "hi app"},
		{"shared/cidr.txt", "10.1.0.0/16\n", "net", "10.1.0.0/16"},
	} {
		writeFile(t, repo, tt.file, tt.content)
		rev = s.publish("infra", repo)
		ws = s.waitWorkspace("app", 3*time.Minute, "applies the commit to "+tt.file, appliedRevision(rev))
		assert.Equal(t, runs+1, ws.Status.Runs, "one run for the commit to %s", tt.file)
		assert.Empty(t, ws.Status.Plan.PlannedRevision, "a new plan is of its own revision")
		runs = ws.Status.Runs
		assertOutput(t, s.ns, "app-outputs", tt.output, tt.value)
	}
}

// TestPendingPlanSurvivesACommitThatChangesNothingItReads: a Manual
// Workspace's plan, approved by one of the two approvers its rule asks
// for, keeps its ID and that approval across a commit that changes
// nothing it reads, stands for the new revision (status says which it was
// planned from), and the second approval applies it. A commit to a file it
// reads replaces the plan, and the approvals of the old one no longer
// count.
func TestPendingPlanSurvivesACommitThatChangesNothingItReads(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	repo := copyConfig(t, "monorepo-reads")
	rev1 := s.gitRepository("infra", repo)
	two := int32(2)
	s.newWorkspace("manual", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.Path = "envs/app"
		ws.Spec.Approval = magosv1.ApprovalManual
		ws.Spec.ApprovalRules = []magosv1.ApprovalRule{{Name: "two", Approvals: &two}}
	})
	awaiting := func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval && ws.Status.Plan != nil
	}
	ws := s.waitWorkspace("manual", 3*time.Minute, "awaits approval", awaiting)
	plan := *ws.Status.Plan
	require.Equal(t, rev1, plan.Revision)
	addApproval := func(p magosv1.PlanStatus, user string) {
		patchWorkspace(t, s.ns, "manual", func(ws *magosv1.Workspace) {
			ws.Spec.Approvals = append(ws.Spec.Approvals, magosv1.Approval{Plan: p.ID, Digest: p.Digest, User: user})
		})
	}
	addApproval(plan, "alice")
	s.waitWorkspace("manual", time.Minute, "records the first approval", func(ws *magosv1.Workspace) bool {
		return awaiting(ws) && len(ws.Status.Plan.Approvals) == 1
	})
	runs := ws.Status.Runs

	writeFile(t, repo, "README.md", "# Described anew\n")
	rev2 := s.publish("infra", repo)
	ws = s.waitWorkspace("manual", time.Minute, "carries the pending plan to the new revision", func(ws *magosv1.Workspace) bool {
		return awaiting(ws) && ws.Status.Plan.Revision == rev2
	})
	assert.Equal(t, plan.ID, ws.Status.Plan.ID, "the plan keeps its ID")
	assert.Equal(t, rev1, ws.Status.Plan.PlannedRevision, "status says which revision it was planned from")
	assert.Len(t, ws.Status.Plan.Approvals, 1, "and keeps its approval")
	assert.Equal(t, runs, ws.Status.Runs, "nothing was planned")
	assert.Contains(t, eventMessage(t, s.ns, "manual", magosv1.ReasonRevisionUnchanged), "pending plan "+plan.ID)

	addApproval(*ws.Status.Plan, "bob")
	ws = s.waitWorkspace("manual", 3*time.Minute, "applies the carried plan once approved twice", appliedRevision(rev2))
	assert.Equal(t, plan.ID, ws.Status.LastApplied.PlanID)
	runs = ws.Status.Runs

	writeFile(t, repo, "shared/data.json", `{"name": "two"}`)
	rev3 := s.publish("infra", repo)
	ws = s.waitWorkspace("manual", 3*time.Minute, "plans the commit to a file it reads", func(ws *magosv1.Workspace) bool {
		return awaiting(ws) && ws.Status.Plan.Revision == rev3
	})
	assert.NotEqual(t, plan.ID, ws.Status.Plan.ID, "a commit to a file read replaces the plan")
	assert.Empty(t, ws.Status.Plan.PlannedRevision)
	assert.Empty(t, ws.Status.Plan.Approvals, "the old plan's approvals do not count for the new one")
	assert.Equal(t, runs+1, ws.Status.Runs)
}

// TestHostileConfigurationStallsOnlyTheWorkspacesThatReadIt: a file of
// deeply nested brackets (which HCL's parser, unbounded, turns into a
// fatal stack overflow) is published in a directory one Workspace reads
// and a WorkspaceSet lists. The controllers stay up: the Workspace that
// reads it stalls with ConfigurationRefused, the one beside it applies
// the same revision, and the set still generates its Workspaces.
func TestHostileConfigurationStallsOnlyTheWorkspacesThatReadIt(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	repo := copyConfig(t, "monorepo-reads")
	writeFile(t, repo, "envs/bad/main.tf", "locals { x = "+strings.Repeat("[", 400_000)+" }\n")
	rev := s.gitRepository("infra", repo)
	s.newWorkspace("bad", "infra", func(ws *magosv1.Workspace) { ws.Spec.Path = "envs/bad" })
	s.newWorkspace("app", "infra", func(ws *magosv1.Workspace) { ws.Spec.Path = "envs/app" })
	s.newWorkspaceSet("envs", "infra", func(set *magosv1.WorkspaceSet) {
		set.Spec.Generators = []magosv1.WorkspaceSetGenerator{{Directories: &magosv1.DirectoriesGenerator{
			SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"}, Include: []string{"envs/*"},
		}}}
		set.Spec.Template.Metadata = magosv1.WorkspaceTemplateMetadata{Name: "set-{{path.basename}}"}
		set.Spec.Template.Spec.Path = "{{path}}"
	})

	bad := s.waitWorkspace("bad", 2*time.Minute, "stalls on the file it reads", func(ws *magosv1.Workspace) bool {
		c := meta.FindStatusCondition(ws.Status.Conditions, magosv1.StalledCondition)
		return c != nil && c.Status == "True" && c.Reason == magosv1.ReasonConfigurationRefused
	})
	assert.Contains(t, meta.FindStatusCondition(bad.Status.Conditions, magosv1.StalledCondition).Message, "envs/bad/main.tf: it nests deeper than 256 levels")
	assert.Zero(t, countJobs(t, s.ns, "bad", magosv1.RunPlan)+countJobs(t, s.ns, "bad", magosv1.RunPlanApply), "no plan started")
	s.waitWorkspace("app", 3*time.Minute, "applies the same revision beside it", appliedRevision(rev))
	s.waitSet("envs", 2*time.Minute, "generates a Workspace per directory, envs/bad too", setGenerated(2))
}
