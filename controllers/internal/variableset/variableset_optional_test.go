package variableset

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestOptionalMissingReference: optional references may be missing; the
// VariableSet is Ready and the reference says "optional, missing".
func TestOptionalMissingReference(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	startController(t, ns)

	createVariableSet(t, ns, "opt", magosv1.VariableSetSpec{
		Variables: []magosv1.Variable{{Name: "extra", ValueFrom: &magosv1.VariableSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "extras"}, Key: "extra", Optional: ptr.To(true)}}}},
		From: []magosv1.WholeObjectSource{{ConfigMapRef: &magosv1.OptionalObjectReference{Name: "overrides", Optional: true}}},
	})
	vs := eventually(t, ns, "opt", readyIs(metav1.ConditionTrue, magosv1.ReconciliationSucceededReason), "VariableSet opt is not Ready")
	assert.Equal(t, []magosv1.ReferenceStatus{
		{Kind: KindConfigMap, Name: "overrides", Message: "ConfigMap overrides not found (optional, missing)"},
		{Kind: KindSecret, Name: "extras", Key: "extra", Message: "Secret extras not found (optional, missing)"},
	}, vs.Status.References)
	// The key reference stays optional, so the runner pod starts without it.
	assert.Equal(t, ptr.To(true), findEnv(vs.Status.Env, "TF_VAR_extra").ValueFrom.SecretKeyRef.Optional)

	createConfigMap(t, ns, "overrides", map[string]string{"size": "xl"})
	vs = eventually(t, ns, "opt", func(vs *magosv1.VariableSet) bool { return findEnv(vs.Status.Env, "TF_VAR_size") != nil },
		"the optional ConfigMap was not expanded once it appeared")
	assert.Equal(t, ptr.To(true), findEnv(vs.Status.Env, "TF_VAR_size").ValueFrom.ConfigMapKeyRef.Optional)
}
