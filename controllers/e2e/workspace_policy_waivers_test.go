package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// TestPolicyWaivers: a Kyverno PolicyException bound to a Workspace and
// its plan's digest waives a denial of that plan only. With the chart's
// admission policy, bob cannot create a waiver in alice's name; `kubectl
// magos waive` run as alice waives the denying policy, the plan applies,
// and status and a PolicyWaived event name the exception, its creator and
// reason. The next plan (a new revision) is denied again: the waiver was
// for the old digest. A waiver that expires while its plan waits for an
// approval stops applying: the plan is blocked again at the expiry.
func TestPolicyWaivers(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	release := "m" + rand.String(5)
	objs := renderChart(t, release, "magos-system",
		"--set-string", "approvalsPolicy.namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name="+s.ns)
	installChart(t, []*unstructured.Unstructured{
		chartObject(objs, "ValidatingAdmissionPolicy", release+"-attributed-waivers"),
		chartObject(objs, "ValidatingAdmissionPolicyBinding", release+"-attributed-waivers"),
	})

	dir := copyConfig(t, "hello")
	s.gitRepository("infra", dir)
	label := rand.String(8)
	denying := validatingPolicy(t, "v1", label, "Deny", forbidsSecret, "secrets must not be modelled as terraform_data")
	allowWaivers(t, denying)
	s.newWorkspace("waived", "infra", selecting(label))
	blocked := func(ws *magosv1.Workspace) bool {
		return ws.Status.Plan != nil && ws.Status.Plan.Policy != nil && !ws.Status.Plan.Policy.Passed && ws.Status.Phase == magosv1.PhaseFailed
	}
	ws := s.waitWorkspace("waived", 3*time.Minute, "is denied", blocked)
	plan := ws.Status.Plan

	// The admission policy: a waiver is created in its creator's name.
	bob := asUser(t, "bob")
	forged := waiverObject(t, s.ns, "forged", denying.GetName(), "waived", plan.Digest, "alice", time.Hour)
	var err error
	require.Eventually(t, func() bool {
		err = bob.Create(ctx, forged.DeepCopy())
		return apierrors.IsForbidden(err)
	}, 30*time.Second, 200*time.Millisecond, "bob cannot waive in alice's name: %v", err)
	assert.Contains(t, err.Error(), "set magos.dev/created-by to bob")

	r := s.magos("waive", "waived", "--plan", "not-the-plan", "--reason", "x")
	assert.NotEqual(t, 0, r.code, "a waiver names the plan reviewed: %s", r)
	assert.Contains(t, r.stderr, "the current plan is "+plan.ID)
	r = s.magos("waive", "waived", "--plan", plan.ID, "--policy", "some-other-policy", "--reason", "x")
	assert.NotEqual(t, 0, r.code, "only a policy that denied the plan is waived: %s", r)

	r = s.magos("waive", "waived", "--plan", plan.ID, "--reason", "INC-42: the secret stays for one release",
		"--as", "alice", "--as-group", "system:masters")
	require.Equal(t, 0, r.code, "%s", r)
	exception := s.ns + "/waived-waiver-" + plan.ID
	assert.Contains(t, r.stdout, "PolicyException "+exception+" waives "+denying.GetName()+" for plan "+plan.ID)
	assert.Contains(t, r.stdout, "created by alice")

	ws = s.waitWorkspace("waived", 3*time.Minute, "applies the waived plan", func(ws *magosv1.Workspace) bool {
		return ws.Status.LastApplied != nil && ws.Status.LastApplied.PlanID == plan.ID && ws.Status.Phase == magosv1.PhaseIdle
	})
	v := ws.Status.Plan.Policy
	require.True(t, v.Passed, v.Message)
	require.Len(t, v.Violations, 1)
	assert.Equal(t, "Deny", v.Violations[0].Action, "the denial is kept, waived")
	assert.Equal(t, []string{exception}, v.Violations[0].WaivedBy)
	assert.Contains(t, v.Message, "1 denial waived")
	assert.True(t, conditions.IsTrue(ws, magosv1.PolicyPassedCondition))
	requireEvent(t, s.ns, "waived", magosv1.ReasonPolicyWaived)
	msg := eventMessage(t, s.ns, "waived", magosv1.ReasonPolicyWaived)
	assert.Contains(t, msg, exception+" by alice (INC-42: the secret stays for one release) until ")

	// The next plan has another digest: the waiver does not apply to it.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "extra.tf"), []byte(`resource "terraform_data" "extra" {}`+"\n"), 0o644))
	rev2 := s.publish("infra", dir)
	ws = s.waitWorkspace("waived", 3*time.Minute, "denies the next plan", func(ws *magosv1.Workspace) bool {
		return blocked(ws) && ws.Status.Plan.Revision == rev2
	})
	require.NotEqual(t, plan.Digest, ws.Status.Plan.Digest)
	require.Len(t, ws.Status.Plan.Policy.Violations, 1)
	assert.Empty(t, ws.Status.Plan.Policy.Violations[0].WaivedBy, "a waiver for an older plan never applies to a new one")
	assert.Equal(t, plan.ID, ws.Status.LastApplied.PlanID, "nothing else was applied")

	// A waiver that expires while its plan awaits approval.
	s.newWorkspace("expiring", "infra", func(ws *magosv1.Workspace) {
		selecting(label)(ws)
		ws.Spec.Approval = magosv1.ApprovalManual
	})
	ws = s.waitWorkspace("expiring", 3*time.Minute, "is denied", blocked)
	r = s.magos("waive", "expiring", "--plan", ws.Status.Plan.ID, "--reason", "briefly", "--expires-in", "15s")
	require.Equal(t, 0, r.code, "%s", r)
	s.waitWorkspace("expiring", time.Minute, "awaits approval once waived", func(ws *magosv1.Workspace) bool {
		return ws.Status.Phase == magosv1.PhaseAwaitingApproval && ws.Status.Plan.Policy.WaiversExpire != nil
	})
	ws = s.waitWorkspace("expiring", time.Minute, "is blocked again when the waiver expires", blocked)
	assert.Contains(t, ws.Status.Plan.Policy.Message, "expired at")
	assert.Nil(t, ws.Status.LastApplied, "nothing was applied")
}

// TestClusterPolicyWaiversNeedTheAdminsConsent: a waiver lives in the
// Workspace's namespace, where a tenant may be able to create
// PolicyExceptions. It does not lift a cluster ValidatingPolicy unless the
// policy allows waivers (magos.dev/waivable: "true"): the plan stays
// blocked, the verdict and a WaiverNotAllowed event name the waiver, and
// once the admin annotates the policy the same waiver lets the plan
// through.
func TestClusterPolicyWaiversNeedTheAdminsConsent(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	s := newStack(t)
	s.gitRepository("infra", copyConfig(t, "hello"))
	label := rand.String(8)
	denying := validatingPolicy(t, "v1", label, "Deny", forbidsSecret, "secrets must not be modelled as terraform_data")
	s.newWorkspace("tenant", "infra", selecting(label))
	blocked := func(ws *magosv1.Workspace) bool {
		return ws.Status.Plan != nil && ws.Status.Plan.Policy != nil && !ws.Status.Plan.Policy.Passed && ws.Status.Phase == magosv1.PhaseFailed
	}
	ws := s.waitWorkspace("tenant", 3*time.Minute, "is denied", blocked)
	plan := ws.Status.Plan

	require.NoError(t, env.Client.Create(ctx, waiverObject(t, s.ns, "self-waiver", denying.GetName(), "tenant", plan.Digest, "mallory", time.Hour)))
	refusal := s.ns + "/self-waiver: ValidatingPolicy " + denying.GetName() + " is cluster-wide and does not allow waivers"
	ws = s.waitWorkspace("tenant", time.Minute, "names the waiver it did not apply", func(ws *magosv1.Workspace) bool {
		return blocked(ws) && strings.Contains(ws.Status.Plan.Policy.Message, refusal)
	})
	require.Len(t, ws.Status.Plan.Policy.Violations, 1)
	assert.Empty(t, ws.Status.Plan.Policy.Violations[0].WaivedBy, "the denial stands")
	assert.Contains(t, ws.Status.Plan.Policy.Message, "PolicyExceptions not applied: ")
	requireEvent(t, s.ns, "tenant", magosv1.ReasonWaiverNotAllowed)
	assert.Contains(t, eventMessage(t, s.ns, "tenant", magosv1.ReasonWaiverNotAllowed), refusal)
	assert.Nil(t, ws.Status.LastApplied, "nothing was applied")

	allowWaivers(t, denying)
	ws = s.waitWorkspace("tenant", 3*time.Minute, "applies the plan once the policy allows waivers", func(ws *magosv1.Workspace) bool {
		return ws.Status.LastApplied != nil && ws.Status.LastApplied.PlanID == plan.ID
	})
	assert.Equal(t, []string{s.ns + "/self-waiver"}, ws.Status.Plan.Policy.Violations[0].WaivedBy)
}

// allowWaivers lets waivers lift the cluster policy u (the admin's
// consent).
func allowWaivers(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"` + magosv1.WaivableAnnotation + `":"true"}}}`)
	require.NoError(t, env.Client.Patch(context.Background(), u, client.RawPatch(types.MergePatchType, patch)))
}

// waiverObject is a PolicyException waiving policy for plan digest of
// Workspace ws, created by user, expiring after ttl.
func waiverObject(t *testing.T, ns, name, policyName, ws, digest, user string, ttl time.Duration) *unstructured.Unstructured {
	t.Helper()
	doc := fmt.Sprintf(`
apiVersion: policies.kyverno.io/v1
kind: PolicyException
metadata:
  name: %s
  namespace: %s
spec:
  policyRefs:
  - name: %s
    kind: ValidatingPolicy
  expiresAt: %q
  properties:
    magos.dev/workspace: %s
    magos.dev/plan-digest: %q
    magos.dev/created-by: %s
`, name, ns, policyName, time.Now().Add(ttl).UTC().Format(time.RFC3339), ws, digest, user)
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u) })
	return u
}
