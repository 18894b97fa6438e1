package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// TestApprovalsCountPeopleUnderTheProjectsFloor: a Project asks two
// approvals of every plan; its Workspace says approval Auto and has a rule
// approving everything. The plan still waits for the Project's two
// approvals. spec.approvedPlan next to alice's entry is one approval, not
// two; an entry written as the workspaceset-controller's ServiceAccount
// is not counted (and the message says so); bob's entry is the second
// approval, and the plan is applied.
func TestApprovalsCountPeopleUnderTheProjectsFloor(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	require.NoError(t, env.Client.Create(ctx, &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: s.ns},
		Spec: magosv1.ProjectSpec{Defaults: &magosv1.ProjectDefaults{
			ApprovalRules: []magosv1.ApprovalRule{{Name: "prod", Approvals: ptr.To(int32(2))}}}}}))
	s.newWorkspace("floored", "infra", func(ws *magosv1.Workspace) {
		ws.Spec.ProjectRef = &magosv1.LocalObjectReference{Name: "prod"}
		ws.Spec.Approval = magosv1.ApprovalAuto
		ws.Spec.ApprovalRules = []magosv1.ApprovalRule{{Name: "everything", AutoApprove: true}}
	})
	awaiting := func(missing string) *magosv1.Workspace {
		return s.waitWorkspace("floored", 3*time.Minute, "awaits approvals: "+missing, func(ws *magosv1.Workspace) bool {
			c := conditions.Get(ws, magosv1.ReadyCondition)
			return ws.Status.Phase == magosv1.PhaseAwaitingApproval && c != nil && strings.Contains(c.Message, missing)
		})
	}
	ws := awaiting("0 of 2 approvals (the Project's rule prod)")
	plan := ws.Status.Plan
	assert.Equal(t, "everything, prod (Project)", plan.ApprovalRule)
	assert.False(t, plan.AutoApproved, "the Workspace's autoApprove rule does not lift the Project's")

	approve := func(mutate func(ws *magosv1.Workspace)) { patchWorkspace(t, s.ns, "floored", mutate) }
	entry := func(user string) magosv1.Approval {
		return magosv1.Approval{Plan: plan.ID, Digest: plan.Digest, User: user}
	}
	approve(func(ws *magosv1.Workspace) {
		ws.Spec.ApprovedPlan = plan.ID
		ws.Spec.Approvals = append(ws.Spec.Approvals, entry("alice"))
	})
	awaiting("1 of 2 approvals (the Project's rule prod)")

	sa := "system:serviceaccount:magos-system:magos-workspaceset-controller"
	approve(func(ws *magosv1.Workspace) { ws.Spec.Approvals = append(ws.Spec.Approvals, entry(sa)) })
	awaiting("1 of 2 approvals (the Project's rule prod) (not counted: " + sa + ", a ServiceAccount no rule names)")
	assert.Zero(t, applyJobs(t, s.ns, "floored"), "nothing applied with alice's approval alone")

	approve(func(ws *magosv1.Workspace) { ws.Spec.Approvals = append(ws.Spec.Approvals, entry("bob")) })
	s.waitWorkspace("floored", 3*time.Minute, "applies once alice and bob approved", appliedRevision(rev))
	assert.Equal(t, 1, applyJobs(t, s.ns, "floored"))
}
