package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// TestHelmChartRunnerTokenPolicy: the chart's ValidatingAdmissionPolicy,
// enforced by the apiserver, refuses ServiceAccount token Secrets for the
// runner ServiceAccounts (apply and plan identities) and admits token
// Secrets of other ServiceAccounts and other Secrets naming a runner.
// The binding is narrowed to the test's namespace, so other tests sharing
// the apiserver are not affected.
func TestHelmChartRunnerTokenPolicy(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns, other := env.NewNamespace(t), env.NewNamespace(t)
	release := "m" + rand.String(5)
	objs := renderChart(t, release, "magos-system",
		"--set-string", "runnerTokenPolicy.namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name="+ns)
	policy := chartObject(objs, "ValidatingAdmissionPolicy", release+"-runner-token-secrets")
	binding := chartObject(objs, "ValidatingAdmissionPolicyBinding", release+"-runner-token-secrets")
	require.NotNil(t, policy, "on by default")
	require.NotNil(t, binding)
	installChart(t, []*unstructured.Unstructured{policy, binding})

	create := func(namespace, account string, typ corev1.SecretType) error {
		return env.Client.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "token-" + rand.String(6),
				Annotations: map[string]string{corev1.ServiceAccountNameKey: account}},
			Type: typ,
		})
	}
	runner := magosv1.RunnerServiceAccountName("ws")
	// The apiserver enforces a new policy once it has loaded it.
	require.Eventually(t, func() bool {
		return apierrors.IsForbidden(create(ns, runner, corev1.SecretTypeServiceAccountToken))
	}, 30*time.Second, 200*time.Millisecond, "the policy refuses a token Secret of the runner ServiceAccount")
	err := create(ns, magosv1.PlanRunnerServiceAccountName("ws"), corev1.SecretTypeServiceAccountToken)
	require.True(t, apierrors.IsForbidden(err), "the plan identity's too: %v", err)
	assert.Contains(t, err.Error(), "magos-plan-runner-ws")

	assert.NoError(t, create(ns, "app", corev1.SecretTypeServiceAccountToken), "another ServiceAccount's token Secret")
	assert.NoError(t, create(ns, runner, corev1.SecretTypeOpaque), "an Opaque Secret with the annotation")
	assert.NoError(t, create(other, runner, corev1.SecretTypeServiceAccountToken), "a namespace the binding does not select")

	release = "m" + rand.String(5)
	assert.Nil(t, chartObject(renderChart(t, release, "magos-system", "--set", "runnerTokenPolicy.enabled=false"),
		"ValidatingAdmissionPolicy", release+"-runner-token-secrets"))
}
