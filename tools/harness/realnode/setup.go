package realnode

import (
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// writeConfig issues the node's certificates and writes the kubeconfigs
// and the configuration files of containerd, the CNI bridge, the kubelet
// and kube-proxy.
func (n *Node) writeConfig(cgroupRoot string) error {
	var err error
	if n.pki, err = newPKI(filepath.Join(n.Dir, "pki")); err != nil {
		return err
	}
	nodeIP := net.ParseIP(NodeIP)
	certs := []certSpec{
		{file: "apiserver", cn: "kube-apiserver", server: true,
			dns: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"},
			ips: []net.IP{nodeIP, net.ParseIP(kubernetesServiceIP), net.ParseIP("127.0.0.1")}},
		{file: "kubelet-serving", cn: NodeName, server: true, dns: []string{NodeName}, ips: []net.IP{nodeIP}},
		{file: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client", orgs: []string{"system:masters"}},
		{file: "admin", cn: "magos-realnode-admin", orgs: []string{"system:masters"}},
		{file: "kubelet", cn: "system:node:" + NodeName, orgs: []string{"system:nodes"}},
		{file: "controller-manager", cn: "system:kube-controller-manager"},
		{file: "scheduler", cn: "system:kube-scheduler"},
		{file: "kube-proxy", cn: "system:kube-proxy"},
	}
	for _, c := range certs {
		if err := n.pki.issue(c); err != nil {
			return err
		}
	}
	if err := n.pki.serviceAccountKey(); err != nil {
		return err
	}
	server := "https://" + net.JoinHostPort(NodeIP, apiserverPort)
	for _, kc := range []string{"admin", "kubelet", "controller-manager", "scheduler", "kube-proxy"} {
		if err := writeKubeconfig(filepath.Join(n.Dir, kc+".kubeconfig"), server, n.pki, kc); err != nil {
			return err
		}
	}
	n.Kubeconfig = filepath.Join(n.Dir, "admin.kubeconfig")
	n.Config = &rest.Config{
		Host: server,
		TLSClientConfig: rest.TLSClientConfig{
			CAFile: n.pki.path("ca.crt"), CertFile: n.pki.path("admin.crt"), KeyFile: n.pki.path("admin.key"),
		},
		Dial:  n.DialContext,
		QPS:   50,
		Burst: 100,
	}
	if n.clientset, err = kubernetes.NewForConfig(n.Config); err != nil {
		return err
	}
	data := map[string]string{
		"Dir":        n.Dir,
		"PKI":        n.pki.dir,
		"Socket":     n.socket(),
		"PauseImage": n.opts.PauseImage.Name,
		"PodCIDR":    PodCIDR,
		"NodeIP":     NodeIP,
		"NodeName":   NodeName,
		"CgroupRoot": cgroupRoot,
		"PodLogsDir": n.PodLogsDir(),
	}
	for file, text := range map[string]string{
		"containerd.toml":             containerdConfig,
		"cni/net.d/10-magos.conflist": cniConfig,
		"kubelet.yaml":                kubeletConfig,
		"kube-proxy.yaml":             kubeProxyConfig,
	} {
		if err := writeTemplate(filepath.Join(n.Dir, file), text, data); err != nil {
			return err
		}
	}
	// Pods resolve no names: the node has no DNS and nothing outside.
	return os.WriteFile(filepath.Join(n.Dir, "resolv.conf"), nil, 0o644)
}
