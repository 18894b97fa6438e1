package outputs_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/runner/internal/outputs"
	"github.com/magos-dev/magos/tools/harness/testenv"
)

var env *testenv.Environment

func TestMain(m *testing.M) { testenv.Main(m, &env) }

func TestWriteReplacesTheOutputsSecret(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	secrets := cs.CoreV1().Secrets(env.NewNamespace(t))
	target := outputs.Target{Name: "web-outputs", Workspace: "web", Owner: planstore.WorkspaceOwner("web", "uid-1")}

	// The runner may not create Secrets: the controller creates it first.
	_, err = outputs.Write(ctx, secrets, target, map[string][]byte{"a": []byte("1")})
	require.ErrorContains(t, err, "outputs Secret web-outputs does not exist")
	_, err = secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name:            "web-outputs",
		Labels:          map[string]string{"app.kubernetes.io/managed-by": "magos", "magos.dev/workspace": "web"},
		OwnerReferences: []metav1.OwnerReference{target.Owner},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)

	changed, err := outputs.Write(ctx, secrets, target, map[string][]byte{"a": []byte("1"), "b": []byte("2")})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, changed, "every output of the first write is new")
	changed, err = outputs.Write(ctx, secrets, target, map[string][]byte{"a": []byte("3")})
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, changed)
	s, err := secrets.Get(ctx, "web-outputs", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[string][]byte{"a": []byte("3")}, s.Data, "outputs that are gone are removed")
	assert.Equal(t, "magos", s.Labels["app.kubernetes.io/managed-by"])
	assert.Equal(t, "web", s.Labels["magos.dev/workspace"])
	require.Len(t, s.OwnerReferences, 1)
	assert.Equal(t, "Workspace", s.OwnerReferences[0].Kind)

	// The same values again change nothing and leave the Secret as it is.
	changed, err = outputs.Write(ctx, secrets, target, map[string][]byte{"a": []byte("3")})
	require.NoError(t, err)
	assert.Empty(t, changed)
	again, err := secrets.Get(ctx, "web-outputs", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, s.ResourceVersion, again.ResourceVersion, "an unchanged write does not update the Secret")
}

func TestChangedNamesOutputsWhoseValueDiffers(t *testing.T) {
	before := map[string][]byte{"same": []byte(`["a","b"]`), "moved": []byte("1"), "gone": []byte("x")}
	after := map[string][]byte{"same": []byte(`["a","b"]`), "moved": []byte("2"), "new": []byte("")}
	assert.Equal(t, []string{"moved", "new"}, outputs.Changed(before, after))
	assert.Empty(t, outputs.Changed(after, after))
	assert.Equal(t, []string{"moved", "new", "same"}, outputs.Changed(nil, after))
}

func TestWriteRefusesSecretsMagosDoesNotManage(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(env.Config)
	require.NoError(t, err)
	secrets := cs.CoreV1().Secrets(env.NewNamespace(t))
	_, err = secrets.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db-password"},
		Data:       map[string][]byte{"password": []byte("keep me")},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	target := outputs.Target{Name: "db-password", Workspace: "web", Owner: planstore.WorkspaceOwner("web", "uid-1")}
	_, err = outputs.Write(ctx, secrets, target, map[string][]byte{"a": []byte("1")})
	require.ErrorContains(t, err, "not managed by Magos")
	s, err := secrets.Get(ctx, "db-password", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, []byte("keep me"), s.Data["password"])
}
