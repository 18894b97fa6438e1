// Package realnode runs a real single-node Kubernetes cluster for the
// real-node test tier: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler, containerd with runc and the CNI bridge plugin, a kubelet
// and kube-proxy in iptables mode — all on this machine, with no Docker.
//
// The whole node lives in namespaces the harness creates and removes:
//
//   - a network namespace holds every address, the CNI bridge, the pods'
//     veths and kube-proxy's iptables rules; the test process reaches the
//     apiserver through sockets it opens inside that namespace
//     (Node.DialContext, Node.Listen), and other programs run inside it
//     through Node.Command;
//   - a private mount namespace holds every mount containerd and the
//     kubelet make (rootfs overlays, secret tmpfs, /run/containerd), so
//     none reaches the host;
//   - a cgroup root of its own (in each cgroup v1 hierarchy) holds every
//     Pod's cgroup.
//
// Stop kills every process of the node, removes its cgroups, both
// namespaces and its directory, and restores the kernel settings the
// kubelet changes at start; nothing is left on the host.
//
// Available says whether this machine can run a node (root, the Debian
// packages `make node-packages` installs, the binaries `make node` builds);
// Require turns its answer into a skip on a developer machine without root
// and a failure under CI=true.
package realnode
