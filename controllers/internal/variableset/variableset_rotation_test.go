package variableset

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestInputsDigestFollowsReferencedObjects: rotating a Secret, editing a
// ConfigMap or changing the spec changes status.inputsDigest (so a Workspace
// re-plans), while the rendered environment stays the same.
func TestInputsDigestFollowsReferencedObjects(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	startController(t, ns)

	s := createSecret(t, ns, "token", map[string]string{"value": "v1"})
	cm := createConfigMap(t, ns, "settings", map[string]string{"size": "small"})
	createVariableSet(t, ns, "app", magosv1.VariableSetSpec{Variables: []magosv1.Variable{
		{Name: "token", ValueFrom: secretKey("token", "value")},
		{Name: "size", ValueFrom: configMapKey("settings", "size")},
	}})
	vs := eventually(t, ns, "app", readyIs(metav1.ConditionTrue, ""), "VariableSet app did not become Ready")
	digests := []string{vs.Status.InputsDigest}
	env0 := vs.Status.Env
	changed := func(vs *magosv1.VariableSet) bool { return vs.Status.InputsDigest != digests[len(digests)-1] }

	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(s), s))
	s.Data["value"] = []byte("v2")
	require.NoError(t, env.Client.Update(ctx, s))
	vs = eventually(t, ns, "app", changed, "rotating the Secret did not change the digest")
	digests = append(digests, vs.Status.InputsDigest)
	assert.Equal(t, env0, vs.Status.Env)

	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm))
	cm.Data["size"] = "large"
	require.NoError(t, env.Client.Update(ctx, cm))
	vs = eventually(t, ns, "app", changed, "editing the ConfigMap did not change the digest")
	digests = append(digests, vs.Status.InputsDigest)

	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "app"}, vs))
	vs.Spec.Variables[1].Sensitive = true
	require.NoError(t, env.Client.Update(ctx, vs))
	vs = eventually(t, ns, "app", changed, "changing the spec did not change the digest")
	digests = append(digests, vs.Status.InputsDigest)
	assert.Equal(t, []string{"TF_VAR_size", "TF_VAR_token"}, vs.Status.SensitiveEnv)

	assert.Len(t, digests, 4)
	for i := range digests {
		for j := range i {
			assert.NotEqual(t, digests[i], digests[j])
		}
	}
}
