package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// outputOf is a valueFrom on output of Workspace workspace.
func outputOf(workspace, output string) *magosv1.VariableSource {
	return &magosv1.VariableSource{OutputRef: &magosv1.OutputReference{Workspace: workspace, Output: output}}
}

// editConfig replaces old with new in dir/main.tf.
func editConfig(t *testing.T, dir, old, new string) {
	t.Helper()
	p := filepath.Join(dir, "main.tf")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Contains(t, string(b), old)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o600))
}

// TestWorkspaceChainReadsOutputsAndReplansOnlyOnChange: network → db → app,
// created at once, each reading its dependency's output (db a list, app a
// string) through outputRef. A network change that alters no output db
// reads re-plans nothing downstream; one that does re-plans db, and app
// only if db's output it reads changed. Deleted together, they are
// destroyed app, db, network.
func TestWorkspaceChainReadsOutputsAndReplansOnlyOnChange(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	netDir := copyConfig(t, "chain/network")
	netRev := s.gitRepository("network", netDir)
	dbRev := s.gitRepository("db", copyConfig(t, "chain/db"))
	appRev := s.gitRepository("app", copyConfig(t, "chain/app"))
	destroyOnDelete := func(ws *magosv1.Workspace) { ws.Spec.DestroyOnDelete = true }
	s.newWorkspace("app", "app", func(ws *magosv1.Workspace) {
		destroyOnDelete(ws)
		ws.Spec.DependsOn = []magosv1.LocalObjectReference{{Name: "db"}}
		ws.Spec.Vars = []magosv1.Variable{{Name: "db_endpoint", ValueFrom: outputOf("db", "endpoint")}}
	})
	s.newWorkspace("db", "db", func(ws *magosv1.Workspace) {
		destroyOnDelete(ws)
		ws.Spec.DependsOn = []magosv1.LocalObjectReference{{Name: "network"}}
		ws.Spec.Vars = []magosv1.Variable{{Name: "subnets", ValueFrom: outputOf("network", "subnets")}}
		ws.Spec.Outputs.Readers = []string{"app"}
	})
	s.newWorkspace("network", "network", func(ws *magosv1.Workspace) {
		destroyOnDelete(ws)
		ws.Spec.Outputs.Readers = []string{"*"}
	})

	s.waitWorkspace("network", 3*time.Minute, "applies", appliedRevision(netRev))
	db := s.waitWorkspace("db", 3*time.Minute, "applies after network", appliedRevision(dbRev))
	app := s.waitWorkspace("app", 3*time.Minute, "applies after db", appliedRevision(appRev))
	assert.Equal(t, `{"zone0":"10.0.1.0/24","zone1":"10.0.2.0/24"}`, outputsOf(t, s.ns, "db")["placement"],
		"the list output arrived as JSON that OpenTofu parsed as list(string)")
	assert.Equal(t, "postgres://db.internal:5432/app", outputsOf(t, s.ns, "app")["url"])
	assert.Equal(t, int64(1), db.Status.Runs, "db planned and applied once (one fast run): it waited for network instead of failing")
	assert.Equal(t, int64(1), app.Status.Runs, "app planned and applied once")

	unchanged := func(name string, runs int64, what string) {
		t.Helper()
		require.Never(t, func() bool { return s.getWorkspace(name).Status.Runs != runs }, 5*time.Second, 250*time.Millisecond, what)
	}

	// A change to an output db does not read.
	editConfig(t, netDir, `default = "first"`, `default = "second"`)
	netRev = s.publish("network", netDir)
	s.waitWorkspace("network", 3*time.Minute, "applies the new label", appliedRevision(netRev))
	assert.Equal(t, "second", outputsOf(t, s.ns, "network")["label"])
	unchanged("db", db.Status.Runs, "db does not re-plan when only an output it does not read changed")
	assert.Equal(t, db.Status.InputsDigest, s.getWorkspace("db").Status.InputsDigest)

	// A change to the output db reads.
	editConfig(t, netDir, `default = "10.0"`, `default = "10.1"`)
	netRev = s.publish("network", netDir)
	s.waitWorkspace("network", 3*time.Minute, "applies the new prefix", appliedRevision(netRev))
	replanned := s.waitWorkspace("db", 3*time.Minute, "re-plans and applies the new subnets", func(ws *magosv1.Workspace) bool {
		return appliedRevision(dbRev)(ws) && ws.Status.LastApplied.PlanID != db.Status.LastApplied.PlanID
	})
	assert.NotEqual(t, db.Status.InputsDigest, replanned.Status.InputsDigest)
	assert.Equal(t, `{"zone0":"10.1.1.0/24","zone1":"10.1.2.0/24"}`, outputsOf(t, s.ns, "db")["placement"])
	unchanged("app", app.Status.Runs, "app does not re-plan: the db output it reads (endpoint) kept its value")
	assert.Equal(t, app.Status.LastApplied.PlanID, s.getWorkspace("app").Status.LastApplied.PlanID)

	// Deleted together: dependents are destroyed first.
	var all []*magosv1.Workspace
	for _, name := range []string{"network", "db", "app"} {
		ws := s.getWorkspace(name)
		require.NoError(t, env.Client.Delete(ctx, ws))
		all = append(all, ws)
	}
	for _, ws := range all {
		s.waitGone(ws, 4*time.Minute, "Workspace "+ws.Name+" is destroyed and goes")
	}
	first, last := destroyWindow(t, s.ns, "app"), destroyWindow(t, s.ns, "db")
	assert.False(t, last.start.Before(first.end), "db's destroy started after app's finished")
	first, last = last, destroyWindow(t, s.ns, "network")
	assert.False(t, last.start.Before(first.end), "network's destroy started after db's finished")
}

// window is when a Workspace's destroy ran: its destroy plan's creation
// to its destroy apply's completion.
type window struct{ start, end time.Time }

// destroyWindow reads the destroy runs of Workspace name from its Jobs.
func destroyWindow(t *testing.T, ns, name string) window {
	t.Helper()
	plans, applies := destroyRunJobs(t, ns, name, magosv1.RunPlan), destroyRunJobs(t, ns, name, magosv1.RunApply)
	require.False(t, len(plans) == 0 || len(applies) == 0, "%s has a destroy plan and a destroy apply", name)
	var w window
	for _, j := range plans {
		w.start = j.CreationTimestamp.Time
	}
	for _, j := range applies {
		require.NotNil(t, j.Status.CompletionTime, "the destroy apply of %s completed", name)
		w.end = j.Status.CompletionTime.Time
	}
	return w
}
