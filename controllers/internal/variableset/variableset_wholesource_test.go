package variableset

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestWholeSecretSource expands every key of a Secret into a sensitive
// TF_VAR_<key> entry read through secretKeyRef, skips keys that are not
// Terraform identifiers, and follows keys added later.
func TestWholeSecretSource(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	startController(t, ns)

	s := createSecret(t, ns, "cloud", map[string]string{"api_key": "k", "api_secret": "s", "tls.crt": "c"})
	createVariableSet(t, ns, "cloud", magosv1.VariableSetSpec{
		From: []magosv1.WholeObjectSource{{SecretRef: &magosv1.OptionalObjectReference{Name: "cloud"}}},
	})
	vs := eventually(t, ns, "cloud", readyIs(metav1.ConditionTrue, ""), "VariableSet cloud did not become Ready")

	secretRef := func(key string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cloud"}, Key: key}}
	}
	assert.Equal(t, []corev1.EnvVar{
		{Name: "TF_VAR_api_key", ValueFrom: secretRef("api_key")},
		{Name: "TF_VAR_api_secret", ValueFrom: secretRef("api_secret")},
	}, vs.Status.Env)
	assert.Equal(t, []string{"TF_VAR_api_key", "TF_VAR_api_secret"}, vs.Status.SensitiveEnv)
	assert.Equal(t, []magosv1.ReferenceStatus{{Kind: KindSecret, Name: "cloud", Ready: true,
		Message: "skipped keys that are not Terraform identifiers: tls.crt"}}, vs.Status.References)

	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(s), s))
	s.Data["region"] = []byte("eu")
	require.NoError(t, env.Client.Update(ctx, s))
	vs = eventually(t, ns, "cloud", func(vs *magosv1.VariableSet) bool { return findEnv(vs.Status.Env, "TF_VAR_region") != nil },
		"a key added to the Secret was not rendered")
	assert.Equal(t, secretRef("region"), findEnv(vs.Status.Env, "TF_VAR_region").ValueFrom)
	assert.Contains(t, vs.Status.SensitiveEnv, "TF_VAR_region")
}
