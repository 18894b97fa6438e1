package clustercheck

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/magos-dev/magos/cli/internal/ops"
	"github.com/magos-dev/magos/cli/internal/view"
)

var tcp = ptr.To(corev1.ProtocolTCP)

// fluxDefaultPolicies are the NetworkPolicies Flux's default installation
// (flux install / flux bootstrap) adds to its namespace.
func fluxDefaultPolicies(ns string) []networkingv1.NetworkPolicy {
	all := metav1.LabelSelector{}
	return []networkingv1.NetworkPolicy{
		{ObjectMeta: metav1.ObjectMeta{Name: "deny-ingress", Namespace: ns}, Spec: networkingv1.NetworkPolicySpec{
			PodSelector: all, PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "allow-egress", Namespace: ns}, Spec: networkingv1.NetworkPolicySpec{
			PodSelector: all,
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "allow-scraping", Namespace: ns}, Spec: networkingv1.NetworkPolicySpec{
			PodSelector: all,
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From:  []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: tcp, Port: ptr.To(intstr.FromInt32(8080))}}}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "allow-webhooks", Namespace: ns}, Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "notification-controller"}},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{}}}}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}},
	}
}

// chartSourcePolicy is the NetworkPolicy the magos chart renders with
// workspace-controller.fluxSourceAccess.enabled (release magos, installed
// in magos-system), admitting the controllers that download artifacts.
func chartSourcePolicy(ns string) networkingv1.NetworkPolicy {
	peer := func(name string) networkingv1.NetworkPolicyPeer {
		return networkingv1.NetworkPolicyPeer{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "magos-system"}},
			PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/instance": "magos"}},
		}
	}
	return networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "magos-workspace-controller-proxy", Namespace: ns}, Spec: networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "source-controller"}},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		Ingress: []networkingv1.NetworkPolicyIngressRule{{
			From:  []networkingv1.NetworkPolicyPeer{peer("workspace-controller"), peer("workspaceset-controller")},
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: tcp, Port: ptr.To(intstr.FromInt32(9090))}},
		}},
	}}
}

func TestEvaluatePolicies(t *testing.T) {
	source := endpoint{Namespace: "flux-system", NamespaceLabels: map[string]string{corev1.LabelMetadataName: "flux-system"},
		Labels: map[string]string{"app": "source-controller"}, IPs: []string{"10.0.0.9"}}
	controller := endpoint{Namespace: "magos-system", NamespaceLabels: map[string]string{corev1.LabelMetadataName: "magos-system"},
		Labels: map[string]string{"app.kubernetes.io/name": "workspace-controller", "app.kubernetes.io/instance": "magos"}, IPs: []string{"10.0.1.5"}}
	port := targetPort{Number: 9090, Name: "http"}
	ingress := func(policies ...networkingv1.NetworkPolicy) policyVerdict {
		return evaluatePolicies(policies, networkingv1.PolicyTypeIngress, source, controller, port)
	}
	rule := func(from networkingv1.NetworkPolicyPeer, ports ...networkingv1.NetworkPolicyPort) networkingv1.NetworkPolicy {
		return networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "custom", Namespace: "flux-system"}, Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "source-controller"}},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{from}, Ports: ports}},
		}}
	}
	magosNS := &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "magos-system"}}

	v := ingress()
	assert.True(t, v.admitted(), "no policy: nothing isolates source-controller")

	v = ingress(fluxDefaultPolicies("flux-system")...)
	assert.False(t, v.admitted(), "Flux's default policies drop the controller's downloads")
	assert.Equal(t, []string{"deny-ingress", "allow-egress", "allow-scraping"}, v.Isolating, "the policies selecting source-controller")

	v = ingress(append(fluxDefaultPolicies("flux-system"), chartSourcePolicy("flux-system"))...)
	assert.True(t, v.admitted())
	assert.Equal(t, "magos-workspace-controller-proxy", v.AdmittedBy)

	assert.True(t, ingress(rule(networkingv1.NetworkPolicyPeer{NamespaceSelector: magosNS}, networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromString("http"))})).admitted(),
		"a named port")
	assert.True(t, ingress(rule(networkingv1.NetworkPolicyPeer{NamespaceSelector: magosNS},
		networkingv1.NetworkPolicyPort{Port: ptr.To(intstr.FromInt32(9000)), EndPort: ptr.To(int32(9100))})).admitted(), "a port range")
	assert.False(t, ingress(rule(networkingv1.NetworkPolicyPeer{NamespaceSelector: magosNS},
		networkingv1.NetworkPolicyPort{Protocol: ptr.To(corev1.ProtocolUDP), Port: ptr.To(intstr.FromInt32(9090))})).admitted(), "UDP only")
	assert.False(t, ingress(rule(networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{}})).admitted(),
		"a pod selector alone admits Pods of the policy's namespace only")
	assert.True(t, ingress(rule(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/16"}})).admitted(), "an ipBlock holding the Pods")
	assert.False(t, ingress(rule(networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/16", Except: []string{"10.0.1.0/24"}}})).admitted(),
		"an ipBlock excepting them")
	assert.False(t, ingress(rule(networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "other"}}})).admitted(),
		"another namespace")

	egressOnly := networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "magos-workspace-controller", Namespace: "magos-system"}, Spec: networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "workspace-controller"}},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		Egress: []networkingv1.NetworkPolicyEgressRule{{
			To:    []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "192.168.0.1/32"}}},
			Ports: []networkingv1.NetworkPolicyPort{{Port: ptr.To(intstr.FromInt32(6443))}},
		}},
	}}
	v = evaluatePolicies([]networkingv1.NetworkPolicy{egressOnly}, networkingv1.PolicyTypeEgress, controller, source, port)
	assert.False(t, v.admitted(), "egress to the Kubernetes API only")
	egressOnly.Spec.Egress = append(egressOnly.Spec.Egress, networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "flux-system"}}}},
	})
	v = evaluatePolicies([]networkingv1.NetworkPolicy{egressOnly}, networkingv1.PolicyTypeEgress, controller, source, port)
	assert.True(t, v.admitted(), "with extra egress to Flux's namespace")
}

func TestServiceOfHost(t *testing.T) {
	for host, want := range map[string][2]string{
		"source-controller.flux-system.svc.cluster.local.": {"source-controller", "flux-system"},
		"source-controller.flux.svc":                       {"source-controller", "flux"},
		"source-controller.flux":                           {"source-controller", "flux"},
	} {
		svc, ns, ok := serviceOfHost(host)
		assert.True(t, ok, host)
		assert.Equal(t, want, [2]string{svc, ns}, host)
	}
	for _, host := range []string{"10.0.0.9", "localhost", "storage.example.com"} {
		_, _, ok := serviceOfHost(host)
		assert.False(t, ok, host)
	}
}

// fluxCluster is a cluster with Flux's source-controller in namespace ns
// (its Service, Pod and the policies of its default installation), a
// GitRepository whose artifact URL points there, and Magos's
// workspace- and workspaceset-controller in magos-system.
func fluxCluster(ns string, extra ...client.Object) client.Reader {
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{corev1.LabelMetadataName: ns}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "magos-system", Labels: map[string]string{corev1.LabelMetadataName: "magos-system"}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "source-controller", Namespace: ns}, Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "source-controller"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
		}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "source-controller-7c9", Namespace: ns, Labels: map[string]string{"app": "source-controller", "pod-template-hash": "7c9"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Ports: []corev1.ContainerPort{
				{Name: "http", ContainerPort: 9090}, {Name: "http-prom", ContainerPort: 8080}}}}},
			Status: corev1.PodStatus{PodIP: "10.0.0.9"}},
	}
	for _, np := range fluxDefaultPolicies(ns) {
		objs = append(objs, &np)
	}
	for _, name := range sourceDownloaders {
		labels := map[string]string{"app.kubernetes.io/name": name, "app.kubernetes.io/instance": "magos"}
		objs = append(objs, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "magos-" + name, Namespace: "magos-system", Labels: labels},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}}})
	}
	repo := &unstructured.Unstructured{}
	repo.SetAPIVersion("source.toolkit.fluxcd.io/v1")
	repo.SetKind("GitRepository")
	repo.SetNamespace("team-a")
	repo.SetName("infra")
	_ = unstructured.SetNestedField(repo.Object, "http://source-controller."+ns+".svc.cluster.local./gitrepository/team-a/infra/abc.tar.gz", "status", "artifact", "url")
	objs = append(objs, repo)
	return fake.NewClientBuilder().WithScheme(ops.Scheme).WithObjects(append(objs, extra...)...).Build()
}

// TestCheckFluxSourceAccess: on a cluster where Flux's default policies
// isolate source-controller, both controllers that download artifacts fail
// the check with the chart value that fixes it; with the chart's policy
// they pass. source-controller is found where the sources' artifact URLs
// point.
func TestCheckFluxSourceAccess(t *testing.T) {
	ctx := context.Background()
	results, err := checkFluxSourceAccess(ctx, fluxCluster("flux"), "magos-system", "")
	require.NoError(t, err)
	require.Len(t, results, 2)
	for i, name := range sourceDownloaders {
		r := results[i]
		assert.Equal(t, name+" → source-controller", r.Name)
		assert.Equal(t, view.CheckFail, r.Status, r.Detail)
		assert.Contains(t, r.Detail, "flux/source-controller port 9090 (http)")
		assert.Contains(t, r.Detail, "allow-egress, allow-scraping, deny-ingress")
		assert.Contains(t, r.Advice, "workspace-controller.fluxSourceAccess.enabled=true")
		assert.Contains(t, r.Advice, "helm upgrade magos charts/magos -n magos-system")
		assert.Contains(t, r.Advice, "fluxSourceAccess.namespace=flux")
	}
	assert.Contains(t, results[0].Detail, "ArtifactFetchFailed")

	policy := chartSourcePolicy("flux")
	results, err = checkFluxSourceAccess(ctx, fluxCluster("flux", &policy), "magos-system", "")
	require.NoError(t, err)
	require.Len(t, results, 2)
	for _, r := range results {
		assert.Equal(t, view.CheckOK, r.Status, r.Detail)
		assert.Contains(t, r.Detail, "admitted by NetworkPolicy magos-workspace-controller-proxy")
	}

	results, err = checkFluxSourceAccess(ctx, fluxCluster("flux"), "magos-system", "elsewhere")
	require.NoError(t, err)
	require.Len(t, results, 1)
	assert.Equal(t, view.CheckWarn, results[0].Status)
	assert.Contains(t, results[0].Detail, "no Service elsewhere/source-controller")
	assert.True(t, strings.Contains(results[0].Advice, "--flux-namespace"), results[0].Advice)
}
