package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
)

// planSecrets is the plan store of namespace ns, read and written as
// anyone with Secret access in the namespace can.
func planSecrets(t *testing.T, ns string) planstoreClient {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	return cs.CoreV1().Secrets(ns)
}

// planstoreClient reads and writes plan Secrets.
type planstoreClient interface {
	planstore.Getter
	planstore.Writer
}

// TestApplyRefusesASwappedBinaryPlan pins that what is applied is exactly
// the plan the policy gate and the approver saw: a binary plan swapped in
// after approval, next to the approved plan JSON and with every checksum
// recomputed as any writer of the plan Secrets can, is refused and nothing
// is applied.
func TestApplyRefusesASwappedBinaryPlan(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	secrets := planSecrets(t, s.ns)
	dir := copyConfig(t, "hello")
	main := filepath.Join(dir, "main.tf")
	benign := readFile(t, main)

	// The attacker's plan: the same configuration plus one resource, planned
	// against the same (empty) state.
	require.NoError(t, os.WriteFile(main, []byte(benign+"\nresource \"terraform_data\" \"evil\" {\n  input = \"pwned\"\n}\n"), 0o644))
	s.gitRepository("infra", dir)
	s.newWorkspace("victim", "infra", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	s.waitWorkspace("victim", 3*time.Minute, "waits for approval of the first plan", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	evil, err := planstore.Load(ctx, secrets, "victim")
	require.NoError(t, err)

	// The plan the approver sees: the configuration without it.
	require.NoError(t, os.WriteFile(main, []byte(benign), 0o644))
	rev := s.publish("infra", dir)
	ws := s.waitWorkspace("victim", 3*time.Minute, "waits for approval of the benign plan", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval && ws.Status.Plan.Revision == rev
	})
	approved, err := planstore.Load(ctx, secrets, "victim")
	require.NoError(t, err)
	require.Equal(t, ws.Status.Plan.ID, approved.ID)
	require.Equal(t, ws.Status.Plan.Digest, approved.Digest)

	// The swap: approved JSON, attacker's binary, consistent annotations.
	_, err = planstore.Store(ctx, secrets, planstore.Input{
		Workspace: "victim", Owner: planstore.WorkspaceOwner("victim", string(ws.UID)),
		ID: approved.ID, JSON: approved.JSON, Binary: evil.Binary,
	})
	require.NoError(t, err)
	approve(t, s.ns, "victim", approved.ID)

	ws = s.waitWorkspace("victim", 3*time.Minute, "finishes the apply run", func(ws *magosv1.Workspace) bool {
		return len(ws.Status.History) > 0 && ws.Status.History[0].Phase == magosv1.RunApply
	})
	run := ws.Status.History[0]
	assert.Equal(t, magosv1.ResultFailed, run.Result)
	assert.Equal(t, magosv1.ReasonPlanBinaryMismatch, run.Reason)
	assert.Contains(t, run.Message, "not the plan the policy gate and the approver saw; nothing was applied")
	assert.Contains(t, run.Message, "it was rewritten since", "the bundle digest recorded with the plan caught the swap before the engine ran")
	assert.Nil(t, ws.Status.LastApplied, "nothing was applied")
	assert.NotContains(t, stateJSON(t, s.ns, "victim"), "evil", "the attacker's resource is not in the state")
}

// stateJSON is the Workspace's state as stored by the default backend, or
// "" when there is none yet.
func stateJSON(t *testing.T, ns, name string) string {
	t.Helper()
	var sec corev1.Secret
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: magosv1.StateSecretName(name)}, &sec)
	if client.IgnoreNotFound(err) == nil && err != nil {
		return ""
	}
	require.NoError(t, err)
	if len(sec.Data[magosv1.StateKey]) == 0 {
		return "" // reserved by the controller, never written
	}
	zr, err := gzip.NewReader(bytes.NewReader(sec.Data[magosv1.StateKey]))
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return string(b)
}
