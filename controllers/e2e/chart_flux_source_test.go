package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// fluxSourcePolicy renders the chart's NetworkPolicy for the Flux namespace
// fluxNS, as a user enables it, with extra helm arguments.
// It is named <release>-workspace-controller-<suffix>.
func fluxSourcePolicy(t *testing.T, release, suffix, fluxNS string, args ...string) (*networkingv1.NetworkPolicy, *unstructured.Unstructured) {
	t.Helper()
	objs := renderChart(t, release, "magos-system", append([]string{
		"--set", "workspace-controller.fluxSourceAccess.enabled=true",
		"--set", "workspace-controller.fluxSourceAccess.namespace=" + fluxNS,
	}, args...)...)
	u := chartObject(objs, "NetworkPolicy", release+"-workspace-controller-"+suffix)
	require.NotNil(t, u, "the chart renders the NetworkPolicy")
	np := &networkingv1.NetworkPolicy{}
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, np))
	return np, u
}

// admits reports whether np's only ingress rule admits a Pod with
// podLabels in a namespace with nsLabels.
func admits(t *testing.T, np *networkingv1.NetworkPolicy, nsLabels, podLabels map[string]string) bool {
	t.Helper()
	require.Len(t, np.Spec.Ingress, 1)
	for _, peer := range np.Spec.Ingress[0].From {
		nsSel, err := metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
		require.NoError(t, err)
		podSel, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
		require.NoError(t, err)
		if nsSel.Matches(labels.Set(nsLabels)) && podSel.Matches(labels.Set(podLabels)) {
			return true
		}
	}
	return false
}

// TestHelmChartFluxSourceAccess: with fluxSourceAccess enabled, the chart
// installs, in the Flux namespace, a NetworkPolicy for source-controller's
// Pods (Flux's labels) that admits to the artifact port the Pods of the
// controllers that download artifacts, the workspace-controller (every
// unit) and the workspaceset-controller, and, with the artifact proxy (the
// default), no runner; without the proxy it also admits runner Pods (by
// the labels every runner Pod carries) from the namespaces the user
// selects; disabled (the default) it renders nothing.
func TestHelmChartFluxSourceAccess(t *testing.T) {
	env.Require(t)
	fluxNS := env.NewNamespace(t)
	runner := map[string]string{magosv1.WorkspaceLabel: "net", magosv1.ManagedByLabel: magosv1.ManagedByValue,
		magosv1.PhaseLabel: magosv1.RunPlan, "job-name": "net-plan-0123456789"}

	release := "m" + rand.String(5)
	proxied, proxiedObj := fluxSourcePolicy(t, release, "proxy", fluxNS, "--set", "workspace-controller.shards={a}")
	magosNS := map[string]string{"kubernetes.io/metadata.name": "magos-system"}
	for _, name := range []string{"workspace-controller", "workspace-controller-shard-a", "workspaceset-controller"} {
		assert.True(t, admits(t, proxied, magosNS, map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/instance": release}),
			"the controller Pods of unit %s", name)
	}
	assert.False(t, admits(t, proxied, magosNS, map[string]string{"app.kubernetes.io/name": "workspace-controller", "app.kubernetes.io/instance": "other"}),
		"another release's controller")
	assert.False(t, admits(t, proxied, map[string]string{}, runner), "a runner Pod")
	assert.False(t, admits(t, proxied, magosNS, runner), "a runner Pod in Magos's namespace")
	installChart(t, []*unstructured.Unstructured{proxiedObj})

	release = "m" + rand.String(5)
	np, obj := fluxSourcePolicy(t, release, "runners", fluxNS, "--set", "workspace-controller.artifactProxy.enabled=false",
		"--set-string", "workspace-controller.fluxSourceAccess.runnerNamespaceSelector.matchLabels.magos\\.dev/runners=true")

	assert.Equal(t, fluxNS, np.Namespace)
	sc, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	require.NoError(t, err)
	assert.True(t, sc.Matches(labels.Set{"app": "source-controller"}), "selects Flux's source-controller Pods")
	assert.False(t, sc.Matches(labels.Set{"app": "kustomize-controller"}), "and no other Flux Pod")
	assert.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, np.Spec.PolicyTypes)
	require.Len(t, np.Spec.Ingress, 1)
	require.Len(t, np.Spec.Ingress[0].Ports, 1)
	assert.Equal(t, int32(9090), np.Spec.Ingress[0].Ports[0].Port.IntVal, "source-controller's artifact port")

	tenant := map[string]string{"magos.dev/runners": "true"}
	assert.True(t, admits(t, np, tenant, runner), "a runner Pod in a selected namespace")
	assert.False(t, admits(t, np, map[string]string{}, runner), "a runner Pod in a namespace not selected")
	assert.False(t, admits(t, np, tenant, map[string]string{"app": "web"}), "another Pod in a selected namespace")
	assert.False(t, admits(t, np, tenant, map[string]string{magosv1.ManagedByLabel: magosv1.ManagedByValue}), "a Pod of no Workspace")
	for _, name := range []string{"workspace-controller", "workspaceset-controller"} {
		assert.True(t, admits(t, np, magosNS, map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/instance": release}),
			"the %s Pods, which read artifacts themselves", name)
	}

	installChart(t, []*unstructured.Unstructured{obj}) // the apiserver accepts it

	release = "m" + rand.String(5)
	off := renderChart(t, release, "magos-system")
	assert.Nil(t, chartObject(off, "NetworkPolicy", release+"-workspace-controller-runners"), "off by default")
	assert.Nil(t, chartObject(off, "NetworkPolicy", release+"-workspace-controller-proxy"), "off by default")
}
