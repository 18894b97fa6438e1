package e2e

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// typed converts the rendered object of kind and name into out, failing
// when the chart did not render it.
func typed(t *testing.T, objs []*unstructured.Unstructured, kind, name string, out any) {
	t.Helper()
	u := chartObject(objs, kind, name)
	require.NotNil(t, u, "the chart renders %s %s", kind, name)
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out))
}

// deployment is the rendered Deployment of release's controller c.
func deployment(t *testing.T, objs []*unstructured.Unstructured, release, c string) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	typed(t, objs, "Deployment", release+"-"+c+"-controller", dep)
	require.Len(t, dep.Spec.Template.Spec.Containers, 1)
	return dep
}

// TestHelmChartPodDisruptionBudget: a PodDisruptionBudget by default only
// for a controller with more than one replica; enabled and maxUnavailable
// override that.
func TestHelmChartPodDisruptionBudget(t *testing.T) {
	env.Require(t)
	release := "m" + rand.String(5)
	objs := renderChart(t, release, "magos-system",
		"--set", "workspace-controller.replicas=2",
		"--set", "rollout-controller.podDisruptionBudget.enabled=true",
		"--set", "rollout-controller.podDisruptionBudget.maxUnavailable=1",
		"--set", "variableset-controller.replicas=3",
		"--set", "variableset-controller.podDisruptionBudget.enabled=false")

	pdb := &policyv1.PodDisruptionBudget{}
	typed(t, objs, "PodDisruptionBudget", release+"-workspace-controller", pdb)
	assert.Equal(t, ptr.To(intstr.FromInt32(1)), pdb.Spec.MinAvailable)
	assert.Nil(t, pdb.Spec.MaxUnavailable)
	assert.Equal(t, deployment(t, objs, release, "workspace").Spec.Selector, pdb.Spec.Selector, "it selects the controller's Pods")

	typed(t, objs, "PodDisruptionBudget", release+"-rollout-controller", pdb)
	assert.Equal(t, ptr.To(intstr.FromInt32(1)), pdb.Spec.MaxUnavailable, "enabled with one replica, maxUnavailable instead of minAvailable")
	assert.Nil(t, pdb.Spec.MinAvailable)

	assert.Nil(t, chartObject(objs, "PodDisruptionBudget", release+"-project-controller"), "one replica: a budget would block every drain")
	assert.Nil(t, chartObject(objs, "PodDisruptionBudget", release+"-variableset-controller"), "enabled=false wins over replicas")
}

// TestHelmChartPodSettings: priority class, Pod labels and annotations,
// extra env and volumes reach the controller's Pod; the security contexts
// take overrides and keep the hardened defaults.
func TestHelmChartPodSettings(t *testing.T) {
	env.Require(t)
	release := "m" + rand.String(5)
	objs := renderChart(t, release, "magos-system",
		"--set", "project-controller.priorityClassName=system-cluster-critical",
		"--set", "project-controller.podLabels.team=platform",
		"--set", "project-controller.podLabels.app\\.kubernetes\\.io/name=hijack",
		"--set", "project-controller.podAnnotations.example\\.com/scrape=yes",
		"--set", "project-controller.extraEnv[0].name=HTTPS_PROXY",
		"--set", "project-controller.extraEnv[0].value=http://proxy:3128",
		"--set", "project-controller.extraVolumes[0].name=ca",
		"--set", "project-controller.extraVolumes[0].configMap.name=corp-ca",
		"--set", "project-controller.extraVolumeMounts[0].name=ca",
		"--set", "project-controller.extraVolumeMounts[0].mountPath=/etc/ssl/corp",
		"--set", "project-controller.podSecurityContext.fsGroup=65532",
		"--set", "project-controller.securityContext.runAsUser=65532")

	pod := deployment(t, objs, release, "project").Spec.Template
	assert.Equal(t, "system-cluster-critical", pod.Spec.PriorityClassName)
	assert.Equal(t, "platform", pod.Labels["team"])
	assert.Equal(t, "project-controller", pod.Labels["app.kubernetes.io/name"], "podLabels cannot change the selector labels")
	assert.Equal(t, map[string]string{"example.com/scrape": "yes"}, pod.Annotations)
	ctr := pod.Spec.Containers[0]
	assert.Equal(t, []corev1.EnvVar{{Name: "HTTPS_PROXY", Value: "http://proxy:3128"}}, ctr.Env)
	require.Len(t, pod.Spec.Volumes, 1)
	assert.Equal(t, "corp-ca", pod.Spec.Volumes[0].ConfigMap.Name)
	assert.Equal(t, []corev1.VolumeMount{{Name: "ca", MountPath: "/etc/ssl/corp"}}, ctr.VolumeMounts)

	assert.Equal(t, &corev1.PodSecurityContext{
		RunAsNonRoot: ptr.To(true), FSGroup: ptr.To[int64](65532),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}, pod.Spec.SecurityContext, "an override adds to the hardened Pod defaults")
	assert.Equal(t, &corev1.SecurityContext{
		RunAsUser: ptr.To[int64](65532), AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}, ctr.SecurityContext, "an override adds to the hardened container defaults")

	other := deployment(t, objs, release, "rollout").Spec.Template
	assert.Empty(t, other.Spec.PriorityClassName, "settings are per controller")
	assert.Empty(t, other.Spec.Containers[0].Env)
	assert.Empty(t, other.Spec.Volumes)
	assert.NotContains(t, other.Labels, "team")
}

// TestHelmChartLogFlags: global.log sets every controller's zap flags, a
// subchart's log wins.
func TestHelmChartLogFlags(t *testing.T) {
	env.Require(t)
	release := "m" + rand.String(5)
	args := func(objs []*unstructured.Unstructured, c string) []string {
		return deployment(t, objs, release, c).Spec.Template.Spec.Containers[0].Args
	}
	def := renderChart(t, release, "magos-system")
	assert.Subset(t, args(def, "workspace"), []string{"--zap-log-level=info", "--zap-encoder=json"})

	set := renderChart(t, release, "magos-system",
		"--set", "global.log.level=debug",
		"--set", "rollout-controller.log.level=error",
		"--set", "rollout-controller.log.encoding=console")
	assert.Subset(t, args(set, "workspace"), []string{"--zap-log-level=debug", "--zap-encoder=json"})
	assert.Subset(t, args(set, "rollout"), []string{"--zap-log-level=error", "--zap-encoder=console"})
}

// TestHelmChartSeparatePlanIdentity: guards.alwaysSeparatePlanIdentity
// reaches the workspace-controller's flag, off by default.
func TestHelmChartSeparatePlanIdentity(t *testing.T) {
	env.Require(t)
	release := "m" + rand.String(5)
	args := func(objs []*unstructured.Unstructured) []string {
		return deployment(t, objs, release, "workspace").Spec.Template.Spec.Containers[0].Args
	}
	assert.Contains(t, args(renderChart(t, release, "magos-system")), "--always-separate-plan-identity=false")
	assert.Contains(t, args(renderChart(t, release, "magos-system", "--set", "workspace-controller.guards.alwaysSeparatePlanIdentity=true")),
		"--always-separate-plan-identity=true")
}

// TestHelmChartServiceAccountAndRBAC: serviceAccount.create/name and
// rbac.create (per controller or global) decide what the chart creates and
// which ServiceAccount the Deployment and bindings name.
func TestHelmChartServiceAccountAndRBAC(t *testing.T) {
	env.Require(t)
	release := "m" + rand.String(5)
	objs := renderChart(t, release, "magos-system",
		"--set", "workspace-controller.serviceAccount.name=magos-ws",
		"--set", "project-controller.serviceAccount.create=false",
		"--set", "project-controller.serviceAccount.name=preexisting",
		"--set", "rollout-controller.serviceAccount.create=false",
		"--set", "variableset-controller.rbac.create=false")

	assert.NotNil(t, chartObject(objs, "ServiceAccount", "magos-ws"))
	assert.Equal(t, "magos-ws", deployment(t, objs, release, "workspace").Spec.Template.Spec.ServiceAccountName)
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		name := release + "-workspace-controller"
		if kind == "RoleBinding" {
			name += "-leader-election"
		}
		subjects, _, _ := unstructured.NestedSlice(chartObject(objs, kind, name).Object, "subjects")
		assert.Equal(t, []any{map[string]any{"kind": "ServiceAccount", "name": "magos-ws", "namespace": "magos-system"}}, subjects, "%s binds the named ServiceAccount", kind)
	}

	assert.Nil(t, chartObject(objs, "ServiceAccount", "preexisting"), "create=false uses a ServiceAccount that exists")
	assert.Equal(t, "preexisting", deployment(t, objs, release, "project").Spec.Template.Spec.ServiceAccountName)
	assert.Nil(t, chartObject(objs, "ServiceAccount", release+"-rollout-controller"))
	assert.Equal(t, "default", deployment(t, objs, release, "rollout").Spec.Template.Spec.ServiceAccountName)

	for _, kind := range []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
		for _, o := range objs {
			assert.False(t, o.GetKind() == kind && o.GetLabels()["app.kubernetes.io/name"] == "variableset-controller",
				"rbac.create=false renders no %s (%s)", kind, o.GetName())
		}
	}
	assert.NotNil(t, chartObject(objs, "ServiceAccount", release+"-variableset-controller"), "the ServiceAccount is still created")

	none := renderChart(t, release, "magos-system", "--set", "global.rbac.create=false", "--set", "rollout-controller.rbac.create=true")
	for _, o := range none {
		if (o.GetKind() == "ClusterRole" || o.GetKind() == "Role") && o.GetName() != release+"-tenant" { // the tenant role is no controller's
			assert.Equal(t, "rollout-controller", o.GetLabels()["app.kubernetes.io/name"], "only the controller that opts in gets RBAC: %s", o.GetName())
		}
	}
	assert.NotNil(t, chartObject(none, "ClusterRole", release+"-rollout-controller"))
}

// TestHelmChartNetworkPolicy: the controller's NetworkPolicy admits only
// the metrics port from the configured peers and, with egress enabled,
// lets out only the apiserver and the extra egress rules. By default it
// restricts ingress alone, and no runner Pod reaches the metrics.
func TestHelmChartNetworkPolicy(t *testing.T) {
	env.Require(t)
	release := "m" + rand.String(5)
	objs := renderChart(t, release, "magos-system",
		"--set", "workspace-controller.networkPolicy.egress.enabled=true",
		"--set", "workspace-controller.networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=monitoring",
		"--set", "workspace-controller.networkPolicy.apiServer.cidrs={10.0.0.1/32}",
		"--set", "workspace-controller.networkPolicy.apiServer.ports={6443}",
		"--set", "workspace-controller.networkPolicy.extraEgress[0].ports[0].port=53",
		"--set", "workspace-controller.networkPolicy.extraEgress[0].ports[0].protocol=UDP")
	np := &networkingv1.NetworkPolicy{}
	typed(t, objs, "NetworkPolicy", release+"-workspace-controller", np)
	assert.Equal(t, "magos-system", np.Namespace)
	assert.Equal(t, *deployment(t, objs, release, "workspace").Spec.Selector, np.Spec.PodSelector)
	assert.ElementsMatch(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}, np.Spec.PolicyTypes)

	require.Len(t, np.Spec.Ingress, 2)
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	assert.Equal(t, []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: ptr.To(intstr.FromString("metrics"))}}, np.Spec.Ingress[0].Ports)
	require.Len(t, np.Spec.Ingress[0].From, 1)
	assert.Equal(t, map[string]string{"kubernetes.io/metadata.name": "monitoring"}, np.Spec.Ingress[0].From[0].NamespaceSelector.MatchLabels)
	// The artifact proxy's port, from runner Pods of any namespace only.
	assert.Equal(t, []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: ptr.To(intstr.FromString("artifacts"))}}, np.Spec.Ingress[1].Ports)
	require.Len(t, np.Spec.Ingress[1].From, 1)
	assert.Empty(t, np.Spec.Ingress[1].From[0].NamespaceSelector.MatchLabels)
	assert.Equal(t, map[string]string{magosv1.ManagedByLabel: magosv1.ManagedByValue}, np.Spec.Ingress[1].From[0].PodSelector.MatchLabels)

	assert.Equal(t, []networkingv1.NetworkPolicyEgressRule{
		{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: ptr.To(intstr.FromInt32(6443))}},
			To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.1/32"}}}},
		{Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: ptr.To(intstr.FromInt32(53))}}},
	}, np.Spec.Egress)

	def := &networkingv1.NetworkPolicy{}
	typed(t, objs, "NetworkPolicy", release+"-project-controller", def)
	assert.Equal(t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, def.Spec.PolicyTypes, "on by default, for ingress only")
	assert.Empty(t, def.Spec.Egress)
	require.Len(t, def.Spec.Ingress, 1)
	assert.Equal(t, []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: ptr.To(intstr.FromString("metrics"))}}, def.Spec.Ingress[0].Ports)
	runner := map[string]string{magosv1.WorkspaceLabel: "net", magosv1.ManagedByLabel: magosv1.ManagedByValue, magosv1.PhaseLabel: magosv1.RunPlan}
	tenant := map[string]string{"kubernetes.io/metadata.name": "team-a"}
	assert.False(t, admits(t, def, tenant, runner), "no runner Pod reads the metrics")
	assert.True(t, admits(t, def, map[string]string{"kubernetes.io/metadata.name": "monitoring"}, map[string]string{"app.kubernetes.io/name": "prometheus"}),
		"without metricsFrom any other Pod scrapes them")

	egress := &networkingv1.NetworkPolicy{}
	typed(t, renderChart(t, release, "magos-system", "--set", "project-controller.networkPolicy.egress.enabled=true"), "NetworkPolicy", release+"-project-controller", egress)
	assert.Equal(t, []networkingv1.NetworkPolicyEgressRule{{Ports: []networkingv1.NetworkPolicyPort{
		{Protocol: &tcp, Port: ptr.To(intstr.FromInt32(443))}, {Protocol: &tcp, Port: ptr.To(intstr.FromInt32(6443))},
	}}}, egress.Spec.Egress, "the apiserver's ports, any address")

	off := renderChart(t, release, "magos-system", "--set", "project-controller.networkPolicy.enabled=false")
	assert.Nil(t, chartObject(off, "NetworkPolicy", release+"-project-controller"), "off when disabled")
}

// TestHelmChartPodMonitor: a PodMonitor on the metrics port replaces the
// ServiceMonitor; asking for both fails to render.
func TestHelmChartPodMonitor(t *testing.T) {
	env.Require(t)
	release := "m" + rand.String(5)
	objs := renderChart(t, release, "magos-system",
		"--set", "global.podMonitor.enabled=true",
		"--set", "global.podMonitor.labels.release=kube-prometheus",
		"--set", "rollout-controller.podMonitor.interval=10s")
	for _, c := range controllerNames {
		name := release + "-" + c + "-controller"
		pm := chartObject(objs, "PodMonitor", name)
		require.NotNil(t, pm, "PodMonitor %s", name)
		assert.Nil(t, chartObject(objs, "ServiceMonitor", name))
		assert.Equal(t, "kube-prometheus", pm.GetLabels()["release"])
		sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
		assert.Equal(t, deployment(t, objs, release, c).Spec.Selector.MatchLabels, sel)
		endpoints, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
		interval := "30s"
		if c == "rollout" {
			interval = "10s"
		}
		assert.Equal(t, []any{map[string]any{"port": "metrics", "interval": interval}}, endpoints)
	}

	out := renderChartError(t, release, "magos-system", "--set", "global.serviceMonitor.enabled=true", "--set", "workspace-controller.podMonitor.enabled=true")
	assert.Contains(t, out, "workspace-controller: enable either serviceMonitor or podMonitor, not both")
}

// TestHelmChartSchema: the values schemas refuse misspelt keys at the top,
// in global and in a controller, and values of the wrong shape.
func TestHelmChartSchema(t *testing.T) {
	env.Require(t)
	for value, want := range map[string]string{
		"workspace-controler.replicas=2":             "additional properties 'workspace-controler' not allowed",
		"global.serviceMonitor.enable=true":          "additional properties 'enable' not allowed",
		"crds.enable=true":                           "additional properties 'enable' not allowed",
		"project-controller.replica=2":               "additional properties 'replica' not allowed",
		"rollout-controller.networkPolicy.on=true":   "additional properties 'on' not allowed",
		"workspace-controller.runner.timeout=30mins": "/runner/timeout",
		"variableset-controller.log.encoding=xml":    "/log/encoding",
		"global.log.level=loud":                      "/global/log/level",
		"project-controller.replicas=two":            "/replicas",
	} {
		t.Run(value, func(t *testing.T) {
			assert.Contains(t, renderChartError(t, "m", "magos-system", "--set", value), want)
		})
	}
}
