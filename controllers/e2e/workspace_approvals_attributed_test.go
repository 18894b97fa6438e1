package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

// asUser is a client acting as user in groups (and system:masters, so
// RBAC allows whatever the test does: what is refused is refused by the
// admission policy).
func asUser(t testing.TB, user string, groups ...string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append([]string{"system:masters"}, groups...)}
	c, err := client.New(cfg, client.Options{Scheme: setup.Scheme()})
	require.NoError(t, err)
	return c
}

// TestApprovalsAreAttributed: with the chart's admission policy, enforced
// by the apiserver, an approval (spec.approvals) is written only in the
// writer's own name and groups: bob cannot approve as alice, nor alice as
// a member of a group she is not in. kubectl magos approve, run as alice,
// approves in her name; the plan is applied, status.plan.approvals and an
// Approved event say alice approved (with her groups), and get -o wide and
// plan show print it. Her entry stays valid when bob later edits the
// Workspace.
func TestApprovalsAreAttributed(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	release := "m" + rand.String(5)
	objs := renderChart(t, release, "magos-system",
		"--set-string", "approvalsPolicy.namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name="+s.ns)
	policy := chartObject(objs, "ValidatingAdmissionPolicy", release+"-attributed-approvals")
	binding := chartObject(objs, "ValidatingAdmissionPolicyBinding", release+"-attributed-approvals")
	require.NotNil(t, policy, "on by default")
	require.NotNil(t, binding)
	installChart(t, []*unstructured.Unstructured{policy, binding})

	rev := s.gitRepository("infra", copyConfig(t, "hello"))
	s.newWorkspace("manual", "infra", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	ws := s.waitWorkspace("manual", 3*time.Minute, "awaits approval", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval
	})
	plan := ws.Status.Plan
	alice, bob := asUser(t, "alice", "platform-admins"), asUser(t, "bob")

	addApproval := func(c client.Client, a magosv1.Approval) error {
		var ws magosv1.Workspace
		if err := c.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "manual"}, &ws); err != nil {
			return err
		}
		patch := client.MergeFrom(ws.DeepCopy())
		ws.Spec.Approvals = append(ws.Spec.Approvals, a)
		return c.Patch(ctx, &ws, patch)
	}
	// The apiserver enforces a new policy once it has loaded it.
	var err error
	require.Eventually(t, func() bool {
		err = addApproval(bob, magosv1.Approval{Plan: plan.ID, Digest: plan.Digest, User: "alice"})
		return apierrors.IsForbidden(err)
	}, 30*time.Second, 200*time.Millisecond, "bob cannot approve as alice: %v", err)
	assert.Contains(t, err.Error(), "bob cannot approve as alice")
	err = addApproval(alice, magosv1.Approval{Plan: plan.ID, Digest: plan.Digest, User: "alice", Groups: []string{"platform-admins", "security"}})
	require.True(t, apierrors.IsForbidden(err), "alice cannot approve as a member of a group she is not in: %v", err)
	assert.Contains(t, err.Error(), "alice is not in security")
	assert.Empty(t, s.workspace("manual").Spec.Approvals, "nothing was approved")
	assert.Equal(t, magosv1.PhaseAwaitingApproval, s.workspace("manual").Status.Phase)

	r := s.magos("approve", "manual", "--plan", plan.ID, "--as", "alice", "--as-group", "system:masters", "--as-group", "platform-admins",
		"--wait", "--timeout", "3m")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Contains(t, r.stdout, "plan "+plan.ID+" approved by alice")
	ws = s.waitWorkspace("manual", 5*time.Second, "applies alice's approval", appliedRevision(rev))
	require.Len(t, ws.Spec.Approvals, 1)
	assert.Equal(t, magosv1.Approval{Plan: plan.ID, Digest: plan.Digest, User: "alice", Groups: []string{"system:masters", "platform-admins"}}, ws.Spec.Approvals[0])
	require.Len(t, ws.Status.Plan.Approvals, 1)
	got := ws.Status.Plan.Approvals[0]
	assert.Equal(t, "alice", got.User)
	assert.ElementsMatch(t, []string{"system:masters", "platform-admins"}, got.Groups)
	assert.False(t, got.Time.IsZero())
	requireEvent(t, s.ns, "manual", magosv1.ReasonApproved)
	assert.Contains(t, eventMessage(t, s.ns, "manual", magosv1.ReasonApproved), "approved by alice (groups ")

	r = s.magos("get", "manual", "-o", "wide")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Contains(t, r.stdout, "APPROVED BY")
	assert.Regexp(t, `manual\s.*\salice\s+`+plan.ID, r.stdout)
	r = s.magos("plan", "show", "manual")
	require.Equal(t, 0, r.code, "%s", r)
	assert.Contains(t, r.stdout, "Approved by alice (groups system:masters, platform-admins) at ")

	// alice's entry stays: bob's edit elsewhere in the spec is admitted.
	patchAs := func(c client.Client) error {
		var ws magosv1.Workspace
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "manual"}, &ws))
		patch := client.MergeFrom(ws.DeepCopy())
		ws.Labels = map[string]string{"team": "a"}
		return c.Patch(ctx, &ws, patch)
	}
	assert.NoError(t, patchAs(bob), "an edit that leaves the approvals as they are")
}

// TestApprovalsPolicyAttributedOnly: with approvalsPolicy.attributedOnly
// the chart's policy also refuses setting spec.approvedPlan, which
// approves without saying who; an attributed entry is still admitted, and
// a Workspace whose approvedPlan predates the policy can still be edited.
func TestApprovalsPolicyAttributedOnly(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStackWith(t, stackOptions{NoControllers: true})
	old := s.newWorkspace("old", "infra", func(ws *magosv1.Workspace) { ws.Spec.ApprovedPlan = "p0" })
	release := "m" + rand.String(5)
	objs := renderChart(t, release, "magos-system", "--set", "approvalsPolicy.attributedOnly=true",
		"--set-string", "approvalsPolicy.namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name="+s.ns)
	installChart(t, []*unstructured.Unstructured{
		chartObject(objs, "ValidatingAdmissionPolicy", release+"-attributed-approvals"),
		chartObject(objs, "ValidatingAdmissionPolicyBinding", release+"-attributed-approvals"),
	})
	alice := asUser(t, "alice")
	ws := s.newWorkspace("manual", "infra", func(ws *magosv1.Workspace) { ws.Spec.Approval = magosv1.ApprovalManual })
	set := func(c client.Client, name string, mutate func(*magosv1.Workspace)) error {
		var ws magosv1.Workspace
		require.NoError(t, c.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: name}, &ws))
		patch := client.MergeFrom(ws.DeepCopy())
		mutate(&ws)
		return c.Patch(ctx, &ws, patch)
	}
	var err error
	tries := 0
	require.Eventually(t, func() bool {
		tries++ // a new value each time: setting the value already there is no change
		err = set(alice, ws.Name, func(ws *magosv1.Workspace) { ws.Spec.ApprovedPlan = fmt.Sprintf("p%d", tries) })
		return apierrors.IsForbidden(err)
	}, 30*time.Second, 200*time.Millisecond, "spec.approvedPlan is refused: %v", err)
	assert.Contains(t, err.Error(), "spec.approvedPlan does not say who approved")
	assert.NoError(t, set(alice, ws.Name, func(ws *magosv1.Workspace) {
		ws.Spec.Approvals = []magosv1.Approval{{Plan: "p1", Digest: "sha256:p1", User: "alice"}}
	}), "an attributed approval")
	assert.NoError(t, set(alice, old.Name, func(ws *magosv1.Workspace) { ws.Labels = map[string]string{"team": "a"} }),
		"a Workspace whose approvedPlan predates the policy can be edited")
	assert.NoError(t, set(alice, old.Name, func(ws *magosv1.Workspace) { ws.Spec.ApprovedPlan = "" }), "and its approvedPlan cleared")
}
