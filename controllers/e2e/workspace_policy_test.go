package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// validatingPolicy creates a cluster-scoped Kyverno ValidatingPolicy in JSON
// mode at apiVersion version, labelled for selection, and deletes it after
// the test. The hello config's plan creates terraform_data.greeting and
// terraform_data.secret.
func validatingPolicy(t testing.TB, version, label, action, expression, message string) *unstructured.Unstructured {
	t.Helper()
	name := "plan-policy-" + rand.String(6)
	doc := fmt.Sprintf(`
apiVersion: policies.kyverno.io/%s
kind: ValidatingPolicy
metadata:
  name: %s
  labels:
    policy.magos.dev/set: %q
spec:
  evaluation:
    mode: JSON
  validationActions: [%s]
  validations:
    - expression: %q
      message: %q
`, version, name, label, action, expression, message)
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object))
	require.NoError(t, env.Client.Create(context.Background(), u))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u) })
	return u
}

const (
	// allowsGreeting passes: the plan only creates terraform_data resources.
	allowsGreeting = `object.resource_changes.all(rc, rc.type == 'terraform_data')`
	// forbidsSecret fails: the plan creates terraform_data.secret.
	forbidsSecret = `!object.resource_changes.exists(rc, rc.address == 'terraform_data.secret')`
)

// setPolicyValidation replaces the policy's validations with one.
func setPolicyValidation(t *testing.T, p *unstructured.Unstructured, expression, message string) {
	t.Helper()
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKeyFromObject(p), p))
	require.NoError(t, unstructured.SetNestedSlice(p.Object, []any{map[string]any{
		"expression": expression, "message": message,
	}}, "spec", "validations"))
	require.NoError(t, env.Client.Update(context.Background(), p))
}

// passingPolicy creates a policy every plan of terraform_data passes and
// returns the mutation that makes a Workspace select it: its plans are
// then gated (a plan Job, the gate, an apply Job with the proof).
func passingPolicy(t testing.TB) func(*magosv1.Workspace) {
	t.Helper()
	label := rand.String(8)
	validatingPolicy(t, "v1", label, "Deny", allowsGreeting, "only terraform_data")
	return selecting(label)
}

func selecting(label string) func(*magosv1.Workspace) {
	return func(ws *magosv1.Workspace) {
		ws.Spec.Policy = &magosv1.PolicySpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"policy.magos.dev/set": label}}}
	}
}

func TestPolicyGate(t *testing.T) {
	env.Require(t)
	s := newStack(t)
	rev := s.gitRepository("infra", copyConfig(t, "hello"))

	t.Run("a passing plan applies, with v1 and v1beta1 policies", func(t *testing.T) {
		label := rand.String(8)
		validatingPolicy(t, "v1", label, "Deny", allowsGreeting, "only terraform_data")
		validatingPolicy(t, "v1beta1", label, "Deny", allowsGreeting, "only terraform_data")
		s.newWorkspace("passing", "infra", selecting(label))
		ws := s.waitWorkspace("passing", 3*time.Minute, "applies", appliedRevision(rev))
		require.NotNil(t, ws.Status.Plan.Policy)
		assert.True(t, ws.Status.Plan.Policy.Passed)
		assert.Len(t, ws.Status.Plan.Policy.Policies, 2, "both policy objects were evaluated")
		assert.True(t, conditions.IsTrue(ws, magosv1.PolicyPassedCondition))
	})

	t.Run("a failing plan is blocked with the policy's message", func(t *testing.T) {
		label := rand.String(8)
		validatingPolicy(t, "v1", label, "Deny", forbidsSecret, "secrets must not be modelled as terraform_data")
		s.newWorkspace("denied", "infra", selecting(label))
		ws := s.waitWorkspace("denied", 3*time.Minute, "is blocked by policy", func(ws *magosv1.Workspace) bool {
			return ws.Status.Plan != nil && ws.Status.Plan.Policy != nil && ws.Status.Phase == magosv1.PhaseFailed
		})
		v := ws.Status.Plan.Policy
		assert.False(t, v.Passed)
		require.Len(t, v.Violations, 1)
		assert.Equal(t, "secrets must not be modelled as terraform_data", v.Violations[0].Message)
		assert.Equal(t, "Deny", v.Violations[0].Action)
		assert.Equal(t, magosv1.ReasonPolicyViolation, conditions.Get(ws, magosv1.PolicyPassedCondition).Reason)
		assert.Contains(t, readyMessage(ws), "secrets must not be modelled as terraform_data")
		assert.True(t, recorded(t, s.ns, "denied", magosv1.ReasonPolicyViolation))

		approve(t, s.ns, "denied", ws.Status.Plan.ID)
		require.Never(t, func() bool { return applyJobs(t, s.ns, "denied") > 0 }, 4*time.Second, 250*time.Millisecond,
			"a denied plan is never applied, even when approvedPlan names it")
	})

	t.Run("a denied plan counts one PolicyDenied however often it is re-evaluated", func(t *testing.T) {
		denials := func() float64 {
			n, _ := seriesValue(t, "magos_workspace_run_failures_total", map[string]string{"reason": magosv1.ReasonPolicyDenied})
			return n
		}
		before := denials()
		label := rand.String(8)
		p := validatingPolicy(t, "v1", label, "Deny", forbidsSecret, "first refusal")
		s.newWorkspace("denied-once", "infra", selecting(label))
		s.waitWorkspace("denied-once", 3*time.Minute, "is blocked", func(ws *magosv1.Workspace) bool {
			return ws.Status.Plan != nil && ws.Status.Plan.Policy != nil && ws.Status.Phase == magosv1.PhaseFailed
		})
		require.Eventually(t, func() bool { return denials() == before+1 }, 10*time.Second, 100*time.Millisecond, "the denial is counted")

		setPolicyValidation(t, p, forbidsSecret, "second refusal")
		s.waitWorkspace("denied-once", 3*time.Minute, "is re-evaluated", func(ws *magosv1.Workspace) bool {
			return ws.Status.Plan != nil && ws.Status.Plan.Policy != nil && strings.Contains(ws.Status.Plan.Policy.Message, "second refusal")
		})
		assert.Equal(t, before+1, denials(), "the same plan denied again is not a second failure")
	})

	t.Run("an Audit-only violation is recorded and the plan applies", func(t *testing.T) {
		label := rand.String(8)
		validatingPolicy(t, "v1", label, "Audit", forbidsSecret, "audit: terraform_data.secret")
		s.newWorkspace("audited", "infra", selecting(label))
		ws := s.waitWorkspace("audited", 3*time.Minute, "applies", appliedRevision(rev))
		v := ws.Status.Plan.Policy
		require.NotNil(t, v)
		assert.True(t, v.Passed)
		require.Len(t, v.Violations, 1)
		assert.Equal(t, "Audit", v.Violations[0].Action)
	})

	t.Run("a broken policy blocks with a clear reason", func(t *testing.T) {
		label := rand.String(8)
		validatingPolicy(t, "v1", label, "Deny", `object.resource_changes.exists(rc, rc.nope(`, "broken")
		s.newWorkspace("broken", "infra", selecting(label))
		ws := s.waitWorkspace("broken", 3*time.Minute, "is blocked", func(ws *magosv1.Workspace) bool {
			return ws.Status.Plan != nil && ws.Status.Plan.Policy != nil && !ws.Status.Plan.Policy.Passed
		})
		assert.Equal(t, magosv1.ReasonPolicyError, conditions.Get(ws, magosv1.PolicyPassedCondition).Reason)
		assert.Nil(t, ws.Status.LastApplied)
	})

	t.Run("an unselected failing policy does not block", func(t *testing.T) {
		validatingPolicy(t, "v1", rand.String(8), "Deny", forbidsSecret, "not for you")
		label := rand.String(8)
		validatingPolicy(t, "v1", label, "Deny", allowsGreeting, "only terraform_data")
		s.newWorkspace("selective", "infra", selecting(label))
		ws := s.waitWorkspace("selective", 3*time.Minute, "applies", appliedRevision(rev))
		assert.Len(t, ws.Status.Plan.Policy.Policies, 1)
	})

	t.Run("editing a policy to pass re-evaluates the pending plan", func(t *testing.T) {
		label := rand.String(8)
		p := validatingPolicy(t, "v1", label, "Deny", forbidsSecret, "blocked for now")
		s.newWorkspace("reconsidered", "infra", selecting(label))
		s.waitWorkspace("reconsidered", 3*time.Minute, "is blocked", func(ws *magosv1.Workspace) bool {
			return ws.Status.Phase == magosv1.PhaseFailed && ws.Status.Plan != nil && ws.Status.Plan.Policy != nil
		})
		setPolicyValidation(t, p, allowsGreeting, "only terraform_data")
		ws := s.waitWorkspace("reconsidered", 3*time.Minute, "applies once the policy passes", appliedRevision(rev))
		assert.True(t, ws.Status.Plan.Policy.Passed)
	})
}
