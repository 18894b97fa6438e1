package variableset

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestSecretValuesNeverLeave pins the core promise: a Secret's value is
// never copied into the VariableSet, an event or a log line, whichever way
// the Secret is referenced, even when kubectl's last-applied annotation
// carries the value too.
func TestSecretValuesNeverLeave(t *testing.T) {
	env.Require(t)
	const sentinel = "s3ntinel-Pa55word-do-not-leak"
	ctx := context.Background()
	ns := env.NewNamespace(t)
	startController(t, ns)

	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-creds", Annotations: map[string]string{
			"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"password":"` + sentinel + `"}}`,
		}},
		StringData: map[string]string{"password": sentinel, "db_user": "app"},
	}
	require.NoError(t, env.Client.Create(ctx, s))

	createVariableSet(t, ns, "db", magosv1.VariableSetSpec{
		Variables: []magosv1.Variable{{Name: "db_password", ValueFrom: secretKey("db-creds", "password")}},
		From:      []magosv1.WholeObjectSource{{SecretRef: &magosv1.OptionalObjectReference{Name: "db-creds"}}},
		Env:       []magosv1.EnvEntry{{Name: "PGPASSWORD", ValueFrom: secretKey("db-creds", "password")}},
	})
	vs := eventually(t, ns, "db", readyIs(metav1.ConditionTrue, ""), "VariableSet db did not become Ready")

	assert.Equal(t, []string{"PGPASSWORD", "TF_VAR_db_password", "TF_VAR_db_user", "TF_VAR_password"}, vs.Status.SensitiveEnv)
	for _, e := range vs.Status.Env {
		assert.Empty(t, e.Value, "%s carries a value", e.Name)
		require.NotNil(t, e.ValueFrom, e.Name)
		require.NotNil(t, e.ValueFrom.SecretKeyRef, e.Name)
		assert.Equal(t, "db-creds", e.ValueFrom.SecretKeyRef.Name)
	}

	// Rotate the Secret and wait for the controller to see it, so that
	// every path (memo miss, uncached read, event) has run at least twice.
	s.StringData = map[string]string{"password": sentinel + "-rotated", "db_user": "app"}
	require.NoError(t, env.Client.Update(ctx, s))
	eventually(t, ns, "db", func(got *magosv1.VariableSet) bool { return got.Status.InputsDigest != vs.Status.InputsDigest },
		"the rotation was not seen")

	forbidden := []string{sentinel, base64.StdEncoding.EncodeToString([]byte(sentinel))}

	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(magosv1.GroupVersion.WithKind(magosv1.VariableSetKind))
	require.NoError(t, env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db"}, u))
	whole, err := json.Marshal(u.Object)
	require.NoError(t, err)

	var evs eventsv1.EventList
	require.NoError(t, env.Client.List(ctx, &evs, client.InNamespace(ns)))
	require.NotEmpty(t, evs.Items, "the Ready transition was recorded as an event")
	events, err := json.Marshal(evs.Items)
	require.NoError(t, err)

	logs := controllerLogs.String()
	require.Contains(t, logs, "db-creds", "the controller logged about the Secret at debug level")
	for _, f := range forbidden {
		assert.NotContains(t, string(whole), f, "the VariableSet holds the Secret value")
		assert.NotContains(t, string(events), f, "an event holds the Secret value")
		assert.NotContains(t, logs, f, "the logs hold the Secret value")
	}
}
