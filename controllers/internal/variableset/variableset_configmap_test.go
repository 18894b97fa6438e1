package variableset

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestConfigMapHCLVariables renders HCL list and map variables, from
// ConfigMap keys and literals, as Terraform reads them: TF_VAR_ entries
// whose HCL is parsed by Terraform for complex-typed variables. ConfigMap
// values are referenced, not copied.
func TestConfigMapHCLVariables(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	startController(t, ns)

	const zones = `["eu-west-1a", "eu-west-1b"]`
	const tags = `{ team = "platform", cost_center = "42" }`
	createConfigMap(t, ns, "network", map[string]string{"zones": zones, "tags": tags, "not-an-identifier.yaml": "x: 1"})
	createVariableSet(t, ns, "network", magosv1.VariableSetSpec{
		Variables: []magosv1.Variable{
			{Name: "zones", ValueFrom: configMapKey("network", "zones"), HCL: true},
			{Name: "tags", ValueFrom: configMapKey("network", "tags"), HCL: true},
			{Name: "cidrs", Value: ptr.To(`["10.0.0.0/16"]`), HCL: true},
		},
		From: []magosv1.WholeObjectSource{{ConfigMapRef: &magosv1.OptionalObjectReference{Name: "network"}, HCL: true}},
	})
	vs := eventually(t, ns, "network", readyIs(metav1.ConditionTrue, magosv1.ReconciliationSucceededReason), "VariableSet network did not become Ready")

	cmRef := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "network"}, Key: key}}
	}
	assert.Equal(t, []corev1.EnvVar{
		{Name: "TF_VAR_cidrs", Value: `["10.0.0.0/16"]`},
		{Name: "TF_VAR_tags", ValueFrom: cmRef("tags")},
		{Name: "TF_VAR_zones", ValueFrom: cmRef("zones")},
	}, vs.Status.Env)
	assert.Empty(t, vs.Status.SensitiveEnv)
	assert.Contains(t, vs.Status.References, magosv1.ReferenceStatus{Kind: KindConfigMap, Name: "network", Ready: true,
		Message: "skipped keys that are not Terraform identifiers: not-an-identifier.yaml"})

	status, err := json.Marshal(vs.Status)
	require.NoError(t, err)
	assert.NotContains(t, string(status), "eu-west-1a", "ConfigMap values are referenced, not copied")
	assert.NotContains(t, string(status), "platform", "ConfigMap values are referenced, not copied")
}
