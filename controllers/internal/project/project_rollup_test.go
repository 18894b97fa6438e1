package project

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// memberStatus is the state a test gives a Workspace through its status
// subresource.
type memberStatus struct {
	phase                   magosv1.WorkspacePhase
	ready, drifted, running bool
}

func setMemberStatus(t *testing.T, ws *magosv1.Workspace, s memberStatus) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(ws), ws))
	ws.Status.Phase = s.phase
	ready := metav1.ConditionFalse
	if s.ready {
		ready = metav1.ConditionTrue
	}
	conditions.Set(ws, magosv1.ReadyCondition, ready, "Test", "set by the test")
	if s.drifted {
		conditions.Set(ws, magosv1.DriftedCondition, metav1.ConditionTrue, "DriftDetected", "set by the test")
	} else {
		conditions.Delete(ws, magosv1.DriftedCondition)
	}
	ws.Status.CurrentRun = nil
	if s.running {
		ws.Status.CurrentRun = &magosv1.RunStatus{Job: ws.Name + "-plan", Phase: "plan", Result: "Running"}
	}
	require.NoError(t, env.Client.Status().Update(ctx, ws))
}

func createWorkspace(t *testing.T, ns, name, project string) *magosv1.Workspace {
	t.Helper()
	ws := &magosv1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       magosv1.WorkspaceSpec{SourceRef: magosv1.SourceReference{Kind: "GitRepository", Name: "infra"}},
	}
	if project != "" {
		ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: project}
	}
	require.NoError(t, env.Client.Create(context.Background(), ws))
	return ws
}

func rollupIs(want magosv1.WorkspaceRollup) func(*magosv1.Project) bool {
	return func(p *magosv1.Project) bool { return p.Status.Workspaces == want }
}

// TestWorkspaceRollup counts 20 member Workspaces in every state, and keeps
// the counts current when a member changes, moves to another Project, or is
// deleted. Workspaces of other Projects and without a Project are not counted.
func TestWorkspaceRollup(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	startController(t, ns)
	createProject(t, ns, "platform", magosv1.ProjectSpec{})
	createProject(t, ns, "other", magosv1.ProjectSpec{})

	// 8 ready and idle (2 of them drifted), 3 failed, 4 awaiting approval,
	// 5 running a plan, 2 awaiting promotion.
	var states []memberStatus
	for i := range 8 {
		states = append(states, memberStatus{phase: magosv1.PhaseIdle, ready: true, drifted: i < 2})
	}
	for range 3 {
		states = append(states, memberStatus{phase: magosv1.PhaseFailed})
	}
	for range 4 {
		states = append(states, memberStatus{phase: magosv1.PhaseAwaitingApproval})
	}
	for range 5 {
		states = append(states, memberStatus{phase: magosv1.PhasePlanning, running: true})
	}
	for range 2 {
		states = append(states, memberStatus{phase: magosv1.PhaseAwaitingPromotion})
	}
	members := make([]*magosv1.Workspace, 0, len(states))
	for i, s := range states {
		ws := createWorkspace(t, ns, fmt.Sprintf("ws-%02d", i), "platform")
		setMemberStatus(t, ws, s)
		members = append(members, ws)
	}
	setMemberStatus(t, createWorkspace(t, ns, "elsewhere", "other"), memberStatus{phase: magosv1.PhaseIdle, ready: true})
	createWorkspace(t, ns, "loose", "")

	eventually(t, ns, "platform", rollupIs(magosv1.WorkspaceRollup{Total: 22, Ready: 8, Failed: 3, Drifted: 2, AwaitingApproval: 4, AwaitingPromotion: 2, Running: 5}),
		"the roll-up of 22 Workspaces is wrong")
	eventually(t, ns, "other", rollupIs(magosv1.WorkspaceRollup{Total: 1, Ready: 1}), "the other Project's roll-up is wrong")

	// A running member finishes and is Ready.
	setMemberStatus(t, members[19], memberStatus{phase: magosv1.PhaseIdle, ready: true})
	eventually(t, ns, "platform", rollupIs(magosv1.WorkspaceRollup{Total: 22, Ready: 9, Failed: 3, Drifted: 2, AwaitingApproval: 4, AwaitingPromotion: 2, Running: 4}),
		"a member's status change was not rolled up")

	// A failed member is deleted.
	require.NoError(t, env.Client.Delete(ctx, members[8]))
	eventually(t, ns, "platform", rollupIs(magosv1.WorkspaceRollup{Total: 21, Ready: 9, Failed: 2, Drifted: 2, AwaitingApproval: 4, AwaitingPromotion: 2, Running: 4}),
		"a deleted member was not rolled up")

	// A drifted member moves to the other Project: both roll-ups follow.
	ws := members[0]
	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(ws), ws))
	ws.Spec.ProjectRef.Name = "other"
	require.NoError(t, env.Client.Update(ctx, ws))
	eventually(t, ns, "platform", rollupIs(magosv1.WorkspaceRollup{Total: 20, Ready: 8, Failed: 2, Drifted: 1, AwaitingApproval: 4, AwaitingPromotion: 2, Running: 4}),
		"a member that left was still counted")
	eventually(t, ns, "other", rollupIs(magosv1.WorkspaceRollup{Total: 2, Ready: 2, Drifted: 1}),
		"a member that joined was not counted")

	// A Workspace joins by setting its projectRef.
	loose := &magosv1.Workspace{}
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "loose"}, loose))
	loose.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "platform"}
	require.NoError(t, env.Client.Update(ctx, loose))
	eventually(t, ns, "platform", rollupIs(magosv1.WorkspaceRollup{Total: 21, Ready: 8, Failed: 2, Drifted: 1, AwaitingApproval: 4, AwaitingPromotion: 2, Running: 4}),
		"a Workspace that joined was not counted")
}
