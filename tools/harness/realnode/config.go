package realnode

import (
	"bytes"
	"os"
	"text/template"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The node's addresses. They exist only inside its network namespace, so
// they cannot collide with the host's.
const (
	// NodeIP is the node's address: the apiserver, the kubelet and
	// anything served with Node.Listen are reached there, from the test
	// process and from Pods alike.
	NodeIP = "10.213.0.2"
	// PodCIDR is where the CNI bridge gives Pods their addresses.
	PodCIDR = "10.214.0.0/24"
	// ServiceCIDR is the Services' range; its first address is the
	// kubernetes Service.
	ServiceCIDR = "10.215.0.0/24"
	// kubernetesServiceIP is the kubernetes Service's ClusterIP.
	kubernetesServiceIP = "10.215.0.1"
	// apiserverPort is the apiserver's secure port on NodeIP.
	apiserverPort = "6443"
)

// writeKubeconfig writes a kubeconfig that reaches the apiserver at
// server with a client certificate of the node's PKI.
func writeKubeconfig(path, server string, p *pki, cert string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["node"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: p.path("ca.crt")}
	cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificate: p.path(cert + ".crt"), ClientKey: p.path(cert + ".key")}
	cfg.Contexts["node"] = &clientcmdapi.Context{Cluster: "node", AuthInfo: "user"}
	cfg.CurrentContext = "node"
	return clientcmd.WriteToFile(*cfg, path)
}

// writeTemplate renders a configuration file.
func writeTemplate(path, text string, data any) error {
	t, err := template.New(path).Option("missingkey=error").Parse(text)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o600)
}

// containerdConfig is containerd 1.6's configuration: state under the
// node's directory, the CRI plugin with runc (cgroupfs), the node's pause
// image and the CNI bridge. restrict_oom_score_adj keeps runc from
// lowering oom_score_adj, which this kind of VM refuses (every Pod would
// otherwise stick in ContainerCreating with "can't get final child's PID
// from pipe: EOF"). The opt plugin would write to /opt; it is off.
// Registry hosts are read from containerd/certs.d (TrustRegistry).
const containerdConfig = `version = 2
root = "{{.Dir}}/containerd/root"
state = "{{.Dir}}/containerd/state"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = "{{.Socket}}"

[ttrpc]
  address = "{{.Socket}}.ttrpc"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{{.PauseImage}}"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "{{.Dir}}/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "{{.Dir}}/containerd/certs.d"
`

// cniConfig is one bridge network: the bridge is the Pods' gateway on the
// node, host-local hands out PodCIDR.
const cniConfig = `{
  "cniVersion": "1.0.0",
  "name": "magos-realnode",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "{{.Dir}}/cni/ipam",
        "ranges": [[{"subnet": "{{.PodCIDR}}"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
`

// kubeletConfig runs the kubelet on cgroup v1 with the cgroupfs driver
// under the node's own cgroup root; protectKernelDefaults: false lets it
// set the kernel tunables it wants (the harness restores them); the API
// reaches it with webhook authentication and authorization; image garbage
// collection is off, since imported images cannot be pulled again; an
// image present on the node is used without re-checking a Pod's pull
// credentials (NeverVerify), since the imported images are the same images
// (same IDs) a test pulls from its own registry with a Secret, which would
// otherwise make the kubelet refuse them to every other Pod; the
// eviction thresholds are small absolute amounts, since a percentage of a
// large shared disk would evict the node's Pods while gigabytes are free.
const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /{{.CgroupRoot}}
cgroupsPerQOS: true
enforceNodeAllocatable: ["pods"]
protectKernelDefaults: false
failSwapOn: false
containerRuntimeEndpoint: unix://{{.Socket}}
imageServiceEndpoint: unix://{{.Socket}}
address: {{.NodeIP}}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: {{.PKI}}/kubelet-serving.crt
tlsPrivateKeyFile: {{.PKI}}/kubelet-serving.key
rotateCertificates: false
serverTLSBootstrap: false
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: {{.PKI}}/ca.crt
authorization:
  mode: Webhook
clusterDomain: cluster.local
resolvConf: {{.Dir}}/resolv.conf
podLogsDir: {{.PodLogsDir}}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
imagePullCredentialsVerificationPolicy: NeverVerify
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "256Mi"
  nodefs.inodesFree: "1000"
  imagefs.available: "256Mi"
syncFrequency: 10s
fileCheckFrequency: 10s
nodeStatusUpdateFrequency: 5s
serializeImagePulls: false
maxPods: 50
`

// kubeProxyConfig runs kube-proxy in iptables mode inside the node's
// network namespace. localhostNodePorts: false spares it setting
// route_localnet, and conntrack maxPerCore 0 and zero timeouts keep it from
// writing the machine-wide conntrack settings.
const kubeProxyConfig = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection:
  kubeconfig: {{.Dir}}/kube-proxy.kubeconfig
hostnameOverride: {{.NodeName}}
bindAddress: {{.NodeIP}}
clusterCIDR: {{.PodCIDR}}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
iptables:
  localhostNodePorts: false
  masqueradeAll: false
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`
