package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
)

// TestApplyRefusesAPlanThatHidesItsProviders pins that the apply's choice
// to skip init fails closed. The apply of a plan of built-in providers only
// skips init, and decides so from the dependency lock inside the stored
// binary plan. A binary rewritten, by anyone who can write the plan
// Secrets, to lock no provider while its resources need one is refused
// before the engine reads it: the stored bundle is not the one recorded
// with the plan. Nothing is applied. (Rewritten before the plan was
// recorded, the engine cannot read it: runner/e2e pins the apply's checks
// of a plan file swapped at plan time.)
func TestApplyRefusesAPlanThatHidesItsProviders(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	secrets := planSecrets(t, s.ns)
	root := t.TempDir()
	s.gitRepository("infra", copyConfig(t, "drift"))
	s.newWorkspace("hidden", "infra", driftWorkspace(magosv1.ApprovalManual, root))
	ws := s.waitWorkspace("hidden", 3*time.Minute, "waits for approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	approved, err := planstore.Load(ctx, secrets, "hidden")
	require.NoError(t, err)
	require.Contains(t, planEntry(t, approved.Binary, ".terraform.lock.hcl"), "registry.opentofu.org/magos/magostest",
		"the plan locks the provider it was made with")

	hiding := replacePlanEntry(t, approved.Binary, ".terraform.lock.hcl", "# no providers\n")
	_, err = planstore.Store(ctx, secrets, planstore.Input{
		Workspace: "hidden", Owner: planstore.WorkspaceOwner("hidden", string(ws.UID)),
		ID: approved.ID, JSON: approved.JSON, Binary: hiding,
	})
	require.NoError(t, err)
	approve(t, s.ns, "hidden", approved.ID)

	ws = s.waitWorkspace("hidden", 3*time.Minute, "finishes the apply run", func(ws *magosv1.Workspace) bool {
		return len(ws.Status.History) > 0 && ws.Status.History[0].Phase == magosv1.RunApply
	})
	run := ws.Status.History[0]
	assert.Equal(t, magosv1.ResultFailed, run.Result)
	assert.Equal(t, magosv1.ReasonPlanBinaryMismatch, run.Reason)
	assert.Contains(t, run.Message, "it was rewritten since")
	assert.Contains(t, run.Message, "nothing was applied")
	assert.Nil(t, ws.Status.LastApplied, "nothing was applied")
	assert.NoFileExists(t, filepath.Join(root, "motd.txt"), "the provider's file was not written")
}

// planEntry is one file of a saved plan (a zip archive).
func planEntry(t *testing.T, plan []byte, name string) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(plan), int64(len(plan)))
	require.NoError(t, err)
	f, err := zr.Open(name)
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	return string(b)
}

// replacePlanEntry returns the saved plan with file name's content
// replaced, every other file as it was.
func replacePlanEntry(t *testing.T, plan []byte, name, content string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(plan), int64(len(plan)))
	require.NoError(t, err)
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified})
		require.NoError(t, err)
		if f.Name == name {
			_, err = io.WriteString(w, content)
			require.NoError(t, err)
			continue
		}
		rc, err := f.Open()
		require.NoError(t, err)
		_, err = io.Copy(w, rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
	}
	require.NoError(t, zw.Close())
	return out.Bytes()
}
