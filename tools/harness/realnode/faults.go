package realnode

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Faults: the node's programs stopped and started again as an operator's
// restart or a crash would, and containers killed through the runtime.

// Restart stops the node program name (etcd, kube-apiserver, containerd,
// kubelet, ...) with SIGTERM, starts it again with the same arguments and
// returns once it serves again: the apiserver ready, containerd answering,
// the node Ready. Its log continues in logs/<name>.<n>.log.
func (n *Node) Restart(ctx context.Context, name string) error {
	i := slices.IndexFunc(n.procs, func(p *process) bool { return p.name == name && !p.exited() })
	if i < 0 {
		return fmt.Errorf("no running node program %s", name)
	}
	old := n.procs[i]
	old.stop(15 * time.Second)
	n.procs = slices.Delete(n.procs, i, i+1)
	n.restarts++
	since := time.Now()
	if _, err := n.start(name, old.argv...); err != nil {
		return err
	}
	switch name {
	case "kube-apiserver":
		return n.waitFor(ctx, "the apiserver to be ready again", 60*time.Second, func(ctx context.Context) (bool, error) {
			b, err := n.clientset.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			return err == nil && string(b) == "ok", nil
		})
	case "containerd":
		return n.waitFor(ctx, "containerd to serve again", 30*time.Second, func(ctx context.Context) (bool, error) {
			return run(ctx, "ctr", "--address", n.socket(), "version") == nil, nil
		})
	case "kubelet":
		// The node stays Ready through a short restart: wait for the new
		// kubelet to renew the node's Lease.
		if err := n.waitFor(ctx, "the restarted kubelet to renew the node's Lease", 90*time.Second, func(ctx context.Context) (bool, error) {
			lease, err := n.clientset.CoordinationV1().Leases("kube-node-lease").Get(ctx, NodeName, metav1.GetOptions{})
			return err == nil && lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(since), nil
		}); err != nil {
			return err
		}
		return n.saved.restore()
	}
	return nil
}

// KillContainer sends SIGKILL to a container's processes through
// containerd, as the kernel's OOM killer or a crash would end them; id is
// a Pod status's containerID, with or without its containerd:// prefix.
func (n *Node) KillContainer(ctx context.Context, id string) error {
	return run(ctx, "ctr", "--address", n.socket(), "--namespace", "k8s.io", "tasks", "kill", "--signal", "SIGKILL", strings.TrimPrefix(id, "containerd://"))
}
