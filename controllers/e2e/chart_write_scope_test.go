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
)

// TestHelmChartControllersStayOutOfProtectedNamespaces: with the chart's
// ClusterRole the workspace-controller may write Secrets in every
// namespace; the chart's write-scope policy (on by default, kube-system and
// flux-system among its namespaces) refuses its writes in the protected
// ones, as the test apiserver enforces it, and leaves its writes elsewhere
// and other identities' writes there alone.
func TestHelmChartControllersStayOutOfProtectedNamespaces(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	protected, tenant, home := env.NewNamespace(t), env.NewNamespace(t), env.NewNamespace(t)
	release := "m" + rand.String(5)
	defaults := renderChart(t, release, home)
	policy := chartObject(defaults, "ValidatingAdmissionPolicy", release+"-workspace-controller-write-scope")
	require.NotNil(t, policy, "on by default")
	assert.Subset(t, protectedNamespaces(t, policy), []string{"kube-system", "flux-system"})
	for _, c := range []string{"project", "rollout", "variableset", "workspaceset"} {
		assert.NotNil(t, chartObject(defaults, "ValidatingAdmissionPolicy", release+"-"+c+"-controller-write-scope"), "every controller has one")
	}

	// The test protects a namespace of its own, so that other tests'
	// writes are not affected.
	objs := renderChart(t, release, home, "--set", "global.rbac.protectedNamespaces={"+protected+","+home+"}")
	var install []*unstructured.Unstructured
	for _, kind := range []string{"ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		o := chartObject(objs, kind, release+"-workspace-controller")
		if kind == "ValidatingAdmissionPolicy" || kind == "ValidatingAdmissionPolicyBinding" {
			o = chartObject(objs, kind, release+"-workspace-controller-write-scope")
		}
		require.NotNil(t, o, kind)
		install = append(install, o)
	}
	installChart(t, install)
	assert.Equal(t, []string{protected}, protectedNamespaces(t, install[2]),
		"the release namespace is never protected: leader election and events live there")

	controller := impersonate(t, home, release+"-workspace-controller")
	secret := func(ns string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s-" + rand.String(6)}}
	}
	// The apiserver enforces a new policy once it has loaded it.
	require.Eventually(t, func() bool {
		return apierrors.IsForbidden(controller.Create(ctx, secret(protected)))
	}, 30*time.Second, 200*time.Millisecond, "the policy refuses the controller's Secret in a protected namespace")
	err := controller.Create(ctx, secret(protected))
	require.True(t, apierrors.IsForbidden(err), "%v", err)
	assert.Contains(t, err.Error(), "the Magos workspace-controller may not write in namespace "+protected)

	existing := secret(protected)
	require.NoError(t, env.Client.Create(ctx, existing), "another identity writes there")
	err = controller.Delete(ctx, existing)
	assert.True(t, apierrors.IsForbidden(err), "nor may it delete there: %v", err)

	assert.NoError(t, controller.Create(ctx, secret(tenant)), "its ClusterRole still serves the other namespaces")
	assert.NoError(t, controller.Create(ctx, secret(home)), "and its own")

	release = "m" + rand.String(5)
	assert.Nil(t, chartObject(renderChart(t, release, home, "--set-json", "global.rbac.protectedNamespaces=[]"),
		"ValidatingAdmissionPolicy", release+"-workspace-controller-write-scope"), "an empty list renders no policy")
}

// protectedNamespaces are the namespaces a write-scope policy matches.
func protectedNamespaces(t *testing.T, policy *unstructured.Unstructured) []string {
	t.Helper()
	exprs, _, err := unstructured.NestedSlice(policy.Object, "spec", "matchConstraints", "namespaceSelector", "matchExpressions")
	require.NoError(t, err)
	require.Len(t, exprs, 1)
	values, _, err := unstructured.NestedStringSlice(exprs[0].(map[string]any), "values")
	require.NoError(t, err)
	return values
}
