package clustercheck

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/magos-dev/magos/cli/internal/view"
)

// The Flux source check reads, without sending any traffic, whether the
// controllers that download Flux artifacts may reach source-controller as
// the NetworkPolicies of both namespaces say: the workspace-controller
// (its artifact proxy relays each run's artifact, and it reads every new
// artifact for what each Workspace reads in it) and the
// workspaceset-controller (a directories generator reads the artifact).
// Flux's default installation denies ingress into its namespace from
// others; on a cluster whose network plugin enforces NetworkPolicies every
// run then fails with ArtifactFetchFailed while everything looks Ready.

// sourceDownloaders are the controllers that download Flux artifacts.
var sourceDownloaders = []string{"workspace-controller", "workspaceset-controller"}

// defaultFluxNamespace and sourceControllerService are where Flux's own
// installation puts source-controller.
const (
	defaultFluxNamespace    = "flux-system"
	sourceControllerService = "source-controller"
)

// endpoint is one side of a connection as NetworkPolicies read it.
type endpoint struct {
	Namespace       string
	NamespaceLabels map[string]string
	Labels          map[string]string
	IPs             []string
}

// targetPort is the port a connection reaches on the destination Pod.
type targetPort struct {
	Number int32
	Name   string // the container port's name, when it has one
}

func (p targetPort) String() string {
	if p.Name != "" {
		return fmt.Sprintf("%d (%s)", p.Number, p.Name)
	}
	return strconv.Itoa(int(p.Number))
}

// policyVerdict is what the NetworkPolicies of one side say of a
// connection: the policies that isolate that side's Pod in the
// connection's direction, and the first that admits the connection.
type policyVerdict struct {
	Isolating  []string
	AdmittedBy string
}

// admitted: no policy isolates the Pod, or one admits the connection.
func (v policyVerdict) admitted() bool { return len(v.Isolating) == 0 || v.AdmittedBy != "" }

// evaluatePolicies reads policies (of self's namespace) for a connection
// of self with peer in direction dir (Ingress: peer connects to self;
// Egress: self connects to peer), to port on the destination Pod.
func evaluatePolicies(policies []networkingv1.NetworkPolicy, dir networkingv1.PolicyType, self, peer endpoint, port targetPort) policyVerdict {
	var v policyVerdict
	for _, np := range policies {
		if np.Namespace != "" && np.Namespace != self.Namespace {
			continue
		}
		if !selects(&np.Spec.PodSelector, self.Labels) || !governs(np, dir) {
			continue
		}
		v.Isolating = append(v.Isolating, np.Name)
		if v.AdmittedBy != "" {
			continue
		}
		if dir == networkingv1.PolicyTypeIngress {
			for _, r := range np.Spec.Ingress {
				if portsAdmit(r.Ports, port) && peersAdmit(r.From, self.Namespace, peer) {
					v.AdmittedBy = np.Name
					break
				}
			}
		} else {
			for _, r := range np.Spec.Egress {
				if portsAdmit(r.Ports, port) && peersAdmit(r.To, self.Namespace, peer) {
					v.AdmittedBy = np.Name
					break
				}
			}
		}
	}
	return v
}

// governs: the policy isolates the Pods it selects in direction dir. With
// no policyTypes a policy governs ingress, and egress when it has egress
// rules.
func governs(np networkingv1.NetworkPolicy, dir networkingv1.PolicyType) bool {
	if len(np.Spec.PolicyTypes) == 0 {
		return dir == networkingv1.PolicyTypeIngress || len(np.Spec.Egress) > 0
	}
	return slices.Contains(np.Spec.PolicyTypes, dir)
}

// selects: the label selector matches set (a nil or empty one matches all;
// one that does not parse matches nothing, as the apiserver refuses it).
func selects(s *metav1.LabelSelector, set map[string]string) bool {
	if s == nil {
		return true
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	return err == nil && sel.Matches(labels.Set(set))
}

// portsAdmit: a rule's ports admit TCP to port (no ports: every port).
func portsAdmit(ports []networkingv1.NetworkPolicyPort, port targetPort) bool {
	if len(ports) == 0 {
		return true
	}
	for _, p := range ports {
		if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP {
			continue
		}
		switch {
		case p.Port == nil:
			return true
		case p.Port.Type == intstr.String:
			if port.Name != "" && p.Port.StrVal == port.Name {
				return true
			}
		case p.EndPort != nil:
			if port.Number >= p.Port.IntVal && port.Number <= *p.EndPort {
				return true
			}
		case p.Port.IntVal == port.Number:
			return true
		}
	}
	return false
}

// peersAdmit: a rule's peers (of a policy in namespace ns) admit peer (no
// peers: every peer).
func peersAdmit(peers []networkingv1.NetworkPolicyPeer, ns string, peer endpoint) bool {
	if len(peers) == 0 {
		return true
	}
	for _, p := range peers {
		switch {
		case p.IPBlock != nil:
			if ipBlockHolds(p.IPBlock, peer.IPs) {
				return true
			}
		case p.NamespaceSelector != nil:
			if selects(p.NamespaceSelector, peer.NamespaceLabels) && selects(p.PodSelector, peer.Labels) {
				return true
			}
		case p.PodSelector != nil:
			if peer.Namespace == ns && selects(p.PodSelector, peer.Labels) {
				return true
			}
		}
	}
	return false
}

// ipBlockHolds: every address in ips (at least one) is in the block and in
// none of its exceptions.
func ipBlockHolds(b *networkingv1.IPBlock, ips []string) bool {
	if len(ips) == 0 {
		return false
	}
	_, block, err := net.ParseCIDR(b.CIDR)
	if err != nil {
		return false
	}
	for _, s := range ips {
		ip := net.ParseIP(s)
		if ip == nil || !block.Contains(ip) {
			return false
		}
		for _, e := range b.Except {
			if _, ex, err := net.ParseCIDR(e); err == nil && ex.Contains(ip) {
				return false
			}
		}
	}
	return true
}

// sourceController is where source-controller serves artifacts: its
// namespace, Service, Pods (as NetworkPolicies see them) and the port a
// download reaches on them.
type sourceController struct {
	Namespace, Service string
	Pod                endpoint
	Port               targetPort
	// Found says how the namespace was found.
	Found string
}

// locateSourceController finds source-controller: in namespace fluxNS when
// given, else where a Flux source's artifact URL points, else in
// flux-system. When it is not found, a result says why.
func locateSourceController(ctx context.Context, c client.Reader, fluxNS string) (sourceController, *view.CheckResult, error) {
	sc := sourceController{Namespace: fluxNS, Service: sourceControllerService, Found: "--flux-namespace"}
	servicePort := intstr.FromInt32(80)
	if fluxNS == "" {
		sc.Namespace, sc.Found = defaultFluxNamespace, "Flux's default namespace"
		if host, port, from := artifactHost(ctx, c); host != "" {
			if svc, ns, ok := serviceOfHost(host); ok {
				sc.Service, sc.Namespace, sc.Found = svc, ns, "the artifact URL of "+from
				if port != "" {
					servicePort = intstr.Parse(port)
				}
			}
		}
	}
	name := "source-controller access"
	var svc corev1.Service
	if err := c.Get(ctx, client.ObjectKey{Namespace: sc.Namespace, Name: sc.Service}, &svc); err != nil {
		switch {
		case apierrors.IsNotFound(err):
			return sc, &view.CheckResult{Name: name, Status: view.CheckWarn,
				Detail: fmt.Sprintf("no Service %s/%s (from %s)", sc.Namespace, sc.Service, sc.Found),
				Advice: "install Flux's source-controller, or pass --flux-namespace where it runs"}, nil
		case apierrors.IsForbidden(err):
			return sc, &view.CheckResult{Name: name, Status: view.CheckWarn,
				Detail: fmt.Sprintf("cannot read the Service %s/%s: %v", sc.Namespace, sc.Service, err),
				Advice: "run check as a user who may read Services, Pods and NetworkPolicies in Flux's namespace"}, nil
		}
		return sc, nil, fmt.Errorf("reading the Service %s/%s: %w", sc.Namespace, sc.Service, err)
	}
	sc.Pod = endpoint{Namespace: sc.Namespace, Labels: svc.Spec.Selector}
	target := intstr.FromInt32(9090)
	for _, p := range svc.Spec.Ports {
		if (servicePort.Type == intstr.Int && p.Port == servicePort.IntVal) || (servicePort.Type == intstr.String && p.Name == servicePort.StrVal) {
			target = p.TargetPort
			if target.Type == intstr.Int && target.IntVal == 0 {
				target = intstr.FromInt32(p.Port)
			}
			break
		}
	}
	var pods corev1.PodList
	if len(svc.Spec.Selector) > 0 {
		if err := c.List(ctx, &pods, client.InNamespace(sc.Namespace), client.MatchingLabels(svc.Spec.Selector)); err != nil && !apierrors.IsForbidden(err) {
			return sc, nil, fmt.Errorf("listing the Pods of %s/%s: %w", sc.Namespace, sc.Service, err)
		}
	}
	if len(pods.Items) > 0 {
		p := pods.Items[0]
		sc.Pod.Labels = p.Labels
		sc.Port = resolvePort(p, target)
		for _, p := range pods.Items {
			if p.Status.PodIP != "" {
				sc.Pod.IPs = append(sc.Pod.IPs, p.Status.PodIP)
			}
		}
	} else if target.Type == intstr.Int {
		sc.Port = targetPort{Number: target.IntVal}
	} else {
		sc.Port = targetPort{Number: 9090, Name: target.StrVal} // Flux's "http" port
	}
	sc.Pod.NamespaceLabels = namespaceLabels(ctx, c, sc.Namespace)
	return sc, nil, nil
}

// resolvePort is the container port of p a Service's target port names.
func resolvePort(p corev1.Pod, target intstr.IntOrString) targetPort {
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			if (target.Type == intstr.String && cp.Name == target.StrVal) || (target.Type == intstr.Int && cp.ContainerPort == target.IntVal) {
				return targetPort{Number: cp.ContainerPort, Name: cp.Name}
			}
		}
	}
	if target.Type == intstr.Int {
		return targetPort{Number: target.IntVal}
	}
	return targetPort{Number: 9090, Name: target.StrVal}
}

// namespaceLabels are a namespace's labels; unreadable, the one label
// every namespace carries.
func namespaceLabels(ctx context.Context, c client.Reader, ns string) map[string]string {
	var n corev1.Namespace
	if err := c.Get(ctx, client.ObjectKey{Name: ns}, &n); err != nil || n.Labels == nil {
		return map[string]string{corev1.LabelMetadataName: ns}
	}
	return n.Labels
}

// fluxSourceKinds are the Flux source kinds whose artifact URL says where
// source-controller serves.
var fluxSourceKinds = []string{"GitRepositoryList", "OCIRepositoryList", "BucketList"}

// artifactHost is the host and port of some Flux source's artifact URL, and
// which source it is ("" when none can be read).
func artifactHost(ctx context.Context, c client.Reader) (host, port, from string) {
	for _, kind := range fluxSourceKinds {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("source.toolkit.fluxcd.io/v1")
		list.SetKind(kind)
		if err := c.List(ctx, list, client.Limit(50)); err != nil {
			continue
		}
		for _, item := range list.Items {
			raw, _, _ := unstructured.NestedString(item.Object, "status", "artifact", "url")
			u, err := url.Parse(raw)
			if raw == "" || err != nil || u.Hostname() == "" {
				continue
			}
			return u.Hostname(), u.Port(), fmt.Sprintf("%s %s/%s", strings.TrimSuffix(kind, "List"), item.GetNamespace(), item.GetName())
		}
	}
	return "", "", ""
}

// serviceOfHost reads a Service's name and namespace from its DNS name
// (<service>.<namespace>[.svc[.<cluster domain>]][.]).
func serviceOfHost(host string) (svc, ns string, ok bool) {
	parts := strings.Split(strings.TrimSuffix(host, "."), ".")
	if len(parts) < 2 || net.ParseIP(host) != nil || (len(parts) > 2 && parts[2] != "svc") {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// checkFluxSourceAccess checks, for each controller that downloads Flux
// artifacts, that the NetworkPolicies of source-controller's namespace
// admit its Pods to source-controller's artifact port and that those of
// Magos's namespace let its Pods out to it.
func checkFluxSourceAccess(ctx context.Context, c client.Reader, installNamespace, fluxNS string) ([]view.CheckResult, error) {
	sc, missing, err := locateSourceController(ctx, c, fluxNS)
	if err != nil {
		return nil, err
	}
	if missing != nil {
		return []view.CheckResult{*missing}, nil
	}
	var ingress, egress networkingv1.NetworkPolicyList
	if err := c.List(ctx, &ingress, client.InNamespace(sc.Namespace)); err != nil {
		if apierrors.IsForbidden(err) {
			return []view.CheckResult{{Name: "source-controller access", Status: view.CheckWarn,
				Detail: fmt.Sprintf("cannot list the NetworkPolicies of %s: %v", sc.Namespace, err),
				Advice: "run check as a user who may list NetworkPolicies in Flux's namespace"}}, nil
		}
		return nil, fmt.Errorf("listing the NetworkPolicies of %s: %w", sc.Namespace, err)
	}
	if err := c.List(ctx, &egress, client.InNamespace(installNamespace)); err != nil && !apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("listing the NetworkPolicies of %s: %w", installNamespace, err)
	}
	magosNS := namespaceLabels(ctx, c, installNamespace)
	var out []view.CheckResult
	for _, name := range sourceDownloaders {
		var deps appsv1.DeploymentList
		if err := c.List(ctx, &deps, client.InNamespace(installNamespace), client.MatchingLabels{"app.kubernetes.io/name": name}); err != nil {
			return nil, fmt.Errorf("listing the Deployments of %s: %w", name, err)
		}
		if len(deps.Items) == 0 {
			continue // the controller check already says so
		}
		pod := endpoint{Namespace: installNamespace, NamespaceLabels: magosNS, Labels: deps.Items[0].Spec.Template.Labels}
		pod.IPs = podIPs(ctx, c, &deps.Items[0])
		out = append(out, sourceAccessCheck(name, sc, pod,
			evaluatePolicies(ingress.Items, networkingv1.PolicyTypeIngress, sc.Pod, pod, sc.Port),
			evaluatePolicies(egress.Items, networkingv1.PolicyTypeEgress, pod, sc.Pod, sc.Port)))
	}
	return out, nil
}

// podIPs are the addresses of a Deployment's running Pods.
func podIPs(ctx context.Context, c client.Reader, d *appsv1.Deployment) []string {
	if d.Spec.Selector == nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(d.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil
	}
	var ips []string
	for _, p := range pods.Items {
		if p.Status.PodIP != "" {
			ips = append(ips, p.Status.PodIP)
		}
	}
	return ips
}

// sourceAccessCheck judges one controller's path to source-controller by
// the verdicts of the policies on both sides.
func sourceAccessCheck(name string, sc sourceController, pod endpoint, ingress, egress policyVerdict) view.CheckResult {
	r := view.CheckResult{Name: name + " → source-controller", Status: view.CheckOK}
	to := fmt.Sprintf("%s/%s port %s", sc.Namespace, sc.Service, sc.Port)
	what := "runs fail with ArtifactFetchFailed"
	if name == "workspaceset-controller" {
		what = "WorkspaceSets with a directories generator cannot read their source"
	}
	switch {
	case !ingress.admitted():
		r.Status = view.CheckFail
		r.Detail = fmt.Sprintf("%s: NetworkPolicies %s select source-controller and admit no %s Pod of %s; where the network plugin enforces them, %s",
			to, strings.Join(ingress.Isolating, ", "), name, pod.Namespace, what)
		release := pod.Labels["app.kubernetes.io/instance"]
		if release == "" {
			release = "magos"
		}
		r.Advice = fmt.Sprintf("set workspace-controller.fluxSourceAccess.enabled=true in the magos chart, with fluxSourceAccess.namespace=%s: helm upgrade %s charts/magos -n %s --reuse-values --set workspace-controller.fluxSourceAccess.enabled=true --set workspace-controller.fluxSourceAccess.namespace=%s (docs/installation.md, Flux sources and network policies)",
			sc.Namespace, release, pod.Namespace, sc.Namespace)
	case !egress.admitted():
		r.Status = view.CheckFail
		r.Detail = fmt.Sprintf("%s: NetworkPolicies %s of %s restrict the %s Pods' egress and let none reach it; where the network plugin enforces them, %s",
			to, strings.Join(egress.Isolating, ", "), pod.Namespace, name, what)
		r.Advice = fmt.Sprintf("add egress to namespace %s on TCP %d to %s.networkPolicy.extraEgress", sc.Namespace, sc.Port.Number, name)
	case ingress.AdmittedBy != "":
		r.Detail = fmt.Sprintf("%s: admitted by NetworkPolicy %s", to, ingress.AdmittedBy)
	default:
		r.Detail = fmt.Sprintf("%s: no NetworkPolicy isolates source-controller", to)
	}
	return r
}
