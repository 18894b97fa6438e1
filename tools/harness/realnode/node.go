package realnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// NodeName is the name the node registers with.
const NodeName = "magos-node"

// Image is an OCI image archive and the name it carries.
type Image struct {
	Name    string
	Archive string
}

// Options configure a Node.
type Options struct {
	// BinDir holds etcd, kube-apiserver and kube-node (`make node`).
	BinDir string
	// PauseImage is the Pods' sandbox image, imported at start.
	PauseImage Image
	// Images are imported into containerd before the kubelet starts.
	Images []string
	// Logf receives progress messages (e.g. t.Logf); optional.
	Logf func(format string, args ...any)
}

// Node is a running single-node cluster.
type Node struct {
	// Dir holds the node's state, configuration and logs (logs/).
	Dir string
	// Config reaches the apiserver as a cluster admin from this process,
	// through the node's network namespace.
	Config *rest.Config
	// Kubeconfig is an admin kubeconfig for programs run with Command.
	Kubeconfig string
	// StartDuration is how long Start took, from nothing to a Ready node.
	StartDuration time.Duration

	opts    Options
	lock    *os.File
	netns   *netns
	mountns *mountns
	cgroups *cgroupRoot
	pki     *pki
	saved   sysctls
	procs   []*process
	// restarts counts Restart calls: each restarted program logs anew.
	restarts  int
	clientset kubernetes.Interface
}

// Start brings up a node and returns once it is Ready, with the kubernetes
// Service answering and the default ServiceAccount of the default
// namespace created. On error everything started is removed again.
func Start(ctx context.Context, opts Options) (n *Node, err error) {
	if err := Available(opts.BinDir); err != nil {
		return nil, err
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	began := time.Now()
	n = &Node{opts: opts}
	// One node at a time on a machine: the kernel settings the harness
	// saves and restores are machine-wide. The lock is on the temporary
	// directory itself, so it leaves no file behind.
	if n.lock, err = lock(os.TempDir()); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Stop())
			n = nil
		}
	}()
	if err := sweepStale(opts.Logf); err != nil {
		return n, fmt.Errorf("removing what an earlier node left on the host: %w", err)
	}
	if n.Dir, err = os.MkdirTemp("", nodePrefix); err != nil {
		return n, err
	}
	id := filepath.Base(n.Dir) // magos-node-<random>: the netns and cgroup name
	for _, d := range []string{"logs", "etcd", "pod-logs", "kubelet", "cni/net.d", "cni/ipam", "containerd"} {
		if err := os.MkdirAll(filepath.Join(n.Dir, d), 0o700); err != nil {
			return n, err
		}
	}
	if err := n.network(ctx, id); err != nil {
		return n, err
	}
	// The kubelet's cAdvisor looks for containerd at its default socket.
	links := map[string]string{"/run/containerd/containerd.sock": n.socket()}
	if n.mountns, err = createMountns(ctx, filepath.Join(n.Dir, "ns"), links); err != nil {
		return n, err
	}
	if n.cgroups, err = createCgroupRoot(id); err != nil {
		return n, err
	}
	if err := n.writeConfig(id); err != nil {
		return n, err
	}
	if err := n.startControlPlane(ctx); err != nil {
		return n, err
	}
	if err := n.startRuntime(ctx); err != nil {
		return n, err
	}
	if err := n.startKubelet(ctx); err != nil {
		return n, err
	}
	n.StartDuration = time.Since(began)
	opts.Logf("realnode: node %s Ready in %s (state in %s)", NodeName, n.StartDuration.Round(time.Millisecond), n.Dir)
	return n, nil
}

// network creates the network namespace with the node's address on its
// loopback link (this kernel has no dummy links; a local address is
// reachable from the Pods' bridge all the same) and forwarding on for the
// Pods' bridge. The namespace has no default route: nothing can leave.
func (n *Node) network(ctx context.Context, id string) error {
	var err error
	if n.netns, err = createNetns(ctx, id); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"addr", "add", NodeIP + "/32", "dev", "lo"},
	} {
		if err := run(ctx, "ip", append([]string{"-n", id}, args...)...); err != nil {
			return err
		}
	}
	return run(ctx, "nsenter", "--net="+n.netns.path(), "--", "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")
}

// socket is containerd's endpoint.
func (n *Node) socket() string { return filepath.Join(n.Dir, "containerd", "containerd.sock") }

// bin is a binary of Options.BinDir.
func (n *Node) bin(name string) string { return filepath.Join(n.opts.BinDir, name) }

// startControlPlane runs etcd, kube-apiserver, kube-controller-manager
// and kube-scheduler and waits for the apiserver to be ready.
func (n *Node) startControlPlane(ctx context.Context) error {
	d, p := n.Dir, n.pki.path
	if _, err := n.start("etcd", n.bin("etcd"),
		"--name=node", "--data-dir="+filepath.Join(d, "etcd"),
		"--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
		"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
		"--initial-cluster=node=http://127.0.0.1:2380", "--unsafe-no-fsync", "--log-level=warn",
	); err != nil {
		return err
	}
	if _, err := n.start("kube-apiserver", n.bin("kube-apiserver"),
		"--etcd-servers=http://127.0.0.1:2379",
		"--advertise-address="+NodeIP, "--bind-address=0.0.0.0", "--secure-port="+apiserverPort,
		"--tls-cert-file="+p("apiserver.crt"), "--tls-private-key-file="+p("apiserver.key"),
		"--client-ca-file="+p("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+p("sa.pub"), "--service-account-signing-key-file="+p("sa.key"),
		"--service-cluster-ip-range="+ServiceCIDR,
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--kubelet-client-certificate="+p("apiserver-kubelet-client.crt"), "--kubelet-client-key="+p("apiserver-kubelet-client.key"),
		"--kubelet-certificate-authority="+p("ca.crt"), "--kubelet-preferred-address-types=InternalIP",
		"--cert-dir="+filepath.Join(d, "apiserver-certs"),
		"--allow-privileged=false", "--profiling=false",
	); err != nil {
		return err
	}
	if err := n.waitFor(ctx, "the apiserver to be ready", 60*time.Second, func(ctx context.Context) (bool, error) {
		b, err := n.clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(b) == "ok", nil
	}); err != nil {
		return err
	}
	if _, err := n.start("kube-controller-manager", n.bin("kube-node"), "kube-controller-manager",
		"--kubeconfig="+filepath.Join(d, "controller-manager.kubeconfig"),
		"--authentication-kubeconfig="+filepath.Join(d, "controller-manager.kubeconfig"),
		"--authorization-kubeconfig="+filepath.Join(d, "controller-manager.kubeconfig"),
		"--use-service-account-credentials=true",
		"--service-account-private-key-file="+p("sa.key"), "--root-ca-file="+p("ca.crt"),
		"--cluster-signing-cert-file="+p("ca.crt"), "--cluster-signing-key-file="+p("ca.key"),
		"--controllers=*", "--leader-elect=false", "--allocate-node-cidrs=false",
		"--bind-address=127.0.0.1", "--secure-port=10257",
	); err != nil {
		return err
	}
	_, err := n.start("kube-scheduler", n.bin("kube-node"), "kube-scheduler",
		"--kubeconfig="+filepath.Join(d, "scheduler.kubeconfig"),
		"--authentication-kubeconfig="+filepath.Join(d, "scheduler.kubeconfig"),
		"--authorization-kubeconfig="+filepath.Join(d, "scheduler.kubeconfig"),
		"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=10259",
	)
	return err
}

// startRuntime runs containerd and imports the pause image and the
// Options' images.
func (n *Node) startRuntime(ctx context.Context) error {
	if _, err := n.start("containerd", "containerd", "--config", filepath.Join(n.Dir, "containerd.toml")); err != nil {
		return err
	}
	if err := n.waitFor(ctx, "containerd to serve", 30*time.Second, func(ctx context.Context) (bool, error) {
		return run(ctx, "ctr", "--address", n.socket(), "version") == nil, nil
	}); err != nil {
		return err
	}
	for _, archive := range append([]string{n.opts.PauseImage.Archive}, n.opts.Images...) {
		if err := n.ImportImage(ctx, archive); err != nil {
			return err
		}
	}
	return nil
}

// startKubelet runs the kubelet and kube-proxy, waits for the node to be
// Ready and restores the kernel settings the kubelet changed.
func (n *Node) startKubelet(ctx context.Context) error {
	var err error
	if n.saved, err = saveSysctls(kernelTunables); err != nil {
		return err
	}
	if _, err := n.start("kubelet", n.bin("kube-node"), "kubelet",
		"--config="+filepath.Join(n.Dir, "kubelet.yaml"),
		"--kubeconfig="+filepath.Join(n.Dir, "kubelet.kubeconfig"),
		"--root-dir="+filepath.Join(n.Dir, "kubelet"),
		"--hostname-override="+NodeName, "--node-ip="+NodeIP, "--v=1",
	); err != nil {
		return err
	}
	if _, err := n.start("kube-proxy", n.bin("kube-node"), "kube-proxy",
		"--config="+filepath.Join(n.Dir, "kube-proxy.yaml"),
	); err != nil {
		return err
	}
	if err := n.waitFor(ctx, "the node to be Ready", 90*time.Second, n.nodeReady); err != nil {
		return err
	}
	if err := n.saved.restore(); err != nil {
		return fmt.Errorf("restoring kernel settings: %w", err)
	}
	return n.waitFor(ctx, "the default ServiceAccount", 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := n.clientset.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// nodeReady is a waitFor condition: the node's Ready condition is True.
func (n *Node) nodeReady(ctx context.Context) (bool, error) {
	node, err := n.clientset.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
	if err != nil {
		return false, nil
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue, nil
		}
	}
	return false, nil
}

// waitFor polls cond until it holds, fails, a node process exits or the
// timeout passes.
func (n *Node) waitFor(ctx context.Context, what string, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond(ctx)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		for _, p := range n.procs {
			if p.exited() {
				return fmt.Errorf("waiting for %s: %s exited (%v); its log ends:\n%s", what, p.name, p.err, p.tail(30))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w; the node's logs are in %s", what, ctx.Err(), filepath.Join(n.Dir, "logs"))
		case <-tick.C:
		}
	}
}

// DialContext opens a connection inside the node's network namespace.
func (n *Node) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return n.netns.DialContext(ctx, network, addr)
}

// Listen opens a listener inside the node's network namespace: on NodeIP
// it is reachable from Pods.
func (n *Node) Listen(network, addr string) (net.Listener, error) {
	return n.netns.Listen(network, addr)
}

// Stop stops every node process and removes all the node made: the
// Pods' processes and cgroups, the mount and network namespaces, the
// node's directory; it restores the kernel settings. It is safe to call on
// a partly started node.
func (n *Node) Stop() error {
	if n == nil {
		return nil
	}
	var errs []error
	for _, name := range []string{"kube-proxy", "kubelet", "kube-scheduler", "kube-controller-manager"} {
		n.stopProcess(name)
	}
	if n.cgroups != nil {
		errs = append(errs, n.cgroups.kill(30*time.Second))
	}
	n.stopProcess("containerd")
	n.stopProcess("kube-apiserver")
	n.stopProcess("etcd")
	if n.mountns != nil {
		if inode, err := n.mountns.inode(); err == nil {
			errs = append(errs, killNamespace(inode, 30*time.Second))
		}
	}
	errs = append(errs, n.cgroups.remove(), n.mountns.destroy(), n.netns.delete(context.Background()))
	if n.saved != nil {
		errs = append(errs, n.saved.restore())
	}
	if n.Dir != "" && os.Getenv("MAGOS_REALNODE_KEEP") == "" {
		errs = append(errs, os.RemoveAll(n.Dir))
	}
	if n.lock != nil {
		errs = append(errs, n.lock.Close())
	}
	return errors.Join(errs...)
}

func (n *Node) stopProcess(name string) {
	for _, p := range n.procs {
		if p.name == name {
			p.stop(15 * time.Second)
		}
	}
}

// lock takes an exclusive lock on an existing file or directory, waiting
// for it.
func lock(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// PodLogsDir is where the kubelet keeps the containers' logs (what
// /var/log/pods holds on other nodes).
func (n *Node) PodLogsDir() string { return filepath.Join(n.Dir, "pod-logs") }
