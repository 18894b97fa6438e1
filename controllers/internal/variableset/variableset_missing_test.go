package variableset

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// TestMissingReferenceRecovers: a missing key (and a missing Secret) makes
// the VariableSet wait with Ready=False naming what is missing, not Stalled;
// when the key and the Secret appear it becomes Ready on its own, through
// the watch, with no polling in the controller.
func TestMissingReferenceRecovers(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	startController(t, ns)

	s := createSecret(t, ns, "db-creds", map[string]string{"user": "app"})
	createVariableSet(t, ns, "db", magosv1.VariableSetSpec{Variables: []magosv1.Variable{
		{Name: "db_user", ValueFrom: secretKey("db-creds", "user")},
		{Name: "db_password", ValueFrom: secretKey("db-creds", "password")},
	}})
	vs := eventually(t, ns, "db", readyIs(metav1.ConditionFalse, magosv1.ReasonReferenceNotFound), "VariableSet db was not waiting for its key")
	ready := conditions.Get(vs, magosv1.ReadyCondition)
	assert.Equal(t, "Waiting for Secret db-creds has no key password", ready.Message)
	assert.True(t, conditions.IsTrue(vs, magosv1.ReconcilingCondition), "a missing reference is a wait in progress")
	assert.Nil(t, conditions.Get(vs, magosv1.StalledCondition), "a missing reference is not Stalled")
	assert.Contains(t, vs.Status.References, magosv1.ReferenceStatus{Kind: KindSecret, Name: "db-creds", Key: "password",
		Message: "Secret db-creds has no key password"})
	require.Len(t, vs.Status.Env, 2, "the environment is rendered while waiting")

	require.NoError(t, env.Client.Get(ctx, client.ObjectKeyFromObject(s), s))
	s.Data["password"] = []byte("hunter2")
	require.NoError(t, env.Client.Update(ctx, s))
	vs = eventually(t, ns, "db", readyIs(metav1.ConditionTrue, magosv1.ReconciliationSucceededReason), "adding the key did not make db Ready")
	assert.Nil(t, conditions.Get(vs, magosv1.ReconcilingCondition))
	for _, r := range vs.Status.References {
		assert.True(t, r.Ready, "%+v", r)
	}

	// A whole missing Secret, created later.
	createVariableSet(t, ns, "later", magosv1.VariableSetSpec{
		From: []magosv1.WholeObjectSource{{SecretRef: &magosv1.OptionalObjectReference{Name: "not-yet"}}},
	})
	vs = eventually(t, ns, "later", readyIs(metav1.ConditionFalse, magosv1.ReasonReferenceNotFound), "VariableSet later was not waiting")
	assert.Equal(t, "Waiting for Secret not-yet not found", conditions.Get(vs, magosv1.ReadyCondition).Message)
	assert.Empty(t, vs.Status.Env)
	createSecret(t, ns, "not-yet", map[string]string{"token": "t"})
	vs = eventually(t, ns, "later", readyIs(metav1.ConditionTrue, ""), "creating the Secret did not make later Ready")
	assert.NotNil(t, findEnv(vs.Status.Env, "TF_VAR_token"))

	// Each Ready transition of db was recorded: a warning naming the key, then a normal event.
	require.Eventually(t, func() bool {
		var evs eventsv1.EventList
		if err := env.Client.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			return false
		}
		var warned, recovered bool
		for _, e := range evs.Items {
			if e.Regarding.Name != "db" {
				continue
			}
			warned = warned || (e.Type == corev1.EventTypeWarning && e.Reason == magosv1.ReasonReferenceNotFound &&
				strings.Contains(e.Note, "Secret db-creds has no key password"))
			recovered = recovered || (e.Type == corev1.EventTypeNormal && e.Reason == magosv1.ReconciliationSucceededReason)
		}
		return warned && recovered
	}, 10*time.Second, 100*time.Millisecond, "Ready transitions of db were not recorded as events")
}
