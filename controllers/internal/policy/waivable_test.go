package policy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/policy"
)

// A waiver lives in a tenant's namespace, where whoever may create
// PolicyExceptions writes it: it lifts a denial of a
// NamespacedValidatingPolicy of that namespace, and of a cluster
// ValidatingPolicy only where the admin who wrote the policy allows
// waivers (magos.dev/waivable: "true").
func TestWaiversLiftAClusterPolicyOnlyWhereItAllowsThem(t *testing.T) {
	tests := []struct {
		name   string
		policy policy.Policy
		lifts  bool
		why    string
	}{
		{"a cluster policy", gatePolicy(t, "ValidatingPolicy", "", "no-destroy", nil), false,
			`team-a/waive: ValidatingPolicy no-destroy is cluster-wide and does not allow waivers (annotation magos.dev/waivable: "true")`},
		{"a cluster policy that refuses waivers", gatePolicy(t, "ValidatingPolicy", "", "no-destroy", map[string]string{magosv1.WaivableAnnotation: "false"}), false,
			"does not allow waivers"},
		{"a cluster policy that allows waivers", gatePolicy(t, "ValidatingPolicy", "", "no-destroy", map[string]string{magosv1.WaivableAnnotation: "true"}), true, ""},
		{"a namespaced policy of the waiver's namespace", gatePolicy(t, "NamespacedValidatingPolicy", "team-a", "no-destroy", nil), true, ""},
		{"a namespaced policy of another namespace", gatePolicy(t, "NamespacedValidatingPolicy", "team-b", "no-destroy", nil), false,
			"NamespacedValidatingPolicy team-b/no-destroy is not of namespace team-a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := waiverFor(t, "waive", tt.policy.Kind(), "no-destroy")
			require.True(t, e.Refers(tt.policy))
			got := policy.WithWaivers([]policy.Policy{tt.policy}, []policy.Exception{e})
			assert.Equal(t, tt.lifts, len(got[0].Exceptions) == 1, "attached to the policy")
			refused := policy.RefusedWaivers([]policy.Policy{tt.policy}, []policy.Exception{e})
			if tt.lifts {
				assert.Empty(t, refused)
				return
			}
			require.Len(t, refused, 1)
			assert.Contains(t, refused[0].Why, tt.why)
			assert.Equal(t, "team-a/waive", refused[0].Exception.Name())
		})
	}
	t.Run("a waiver naming a policy that is not selected is not refused", func(t *testing.T) {
		e := waiverFor(t, "waive", "ValidatingPolicy", "elsewhere")
		assert.Empty(t, policy.RefusedWaivers([]policy.Policy{gatePolicy(t, "ValidatingPolicy", "", "no-destroy", nil)}, []policy.Exception{e}))
	})
}

// gatePolicy is a JSON-mode policy of kind in namespace with annotations.
func gatePolicy(t *testing.T, kind, namespace, name string, annotations map[string]string) policy.Policy {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": policy.Group + "/v1", "kind": kind,
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"evaluation": map[string]any{"mode": "JSON"}, "validations": []any{map[string]any{"expression": "true"}}},
	}}
	u.SetNamespace(namespace)
	u.SetAnnotations(annotations)
	p, err := policy.FromUnstructured(u)
	require.NoError(t, err)
	return p
}

// waiverFor is a PolicyException in team-a naming policy name of kind.
func waiverFor(t *testing.T, name, kind, policyName string) policy.Exception {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": policy.Group + "/v1", "kind": policy.KindPolicyException,
		"metadata": map[string]any{"name": name, "namespace": "team-a"},
		"spec":     map[string]any{"policyRefs": []any{map[string]any{"name": policyName, "kind": kind}}},
	}}
	e, err := policy.ExceptionFromUnstructured(u)
	require.NoError(t, err)
	return e
}
