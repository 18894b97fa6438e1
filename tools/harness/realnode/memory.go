package realnode

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RSS is the resident memory of every process of the node — control plane,
// containerd and its shims, kubelet, kube-proxy and the Pods' containers —
// in bytes.
func (n *Node) RSS() (uint64, error) {
	return n.rssOf(func(int) bool { return true })
}

// ProcessRSS is the resident memory, in bytes, of the node's processes
// whose executable is named name (a container's entrypoint, say), and how
// many there are.
func (n *Node) ProcessRSS(name string) (rss uint64, count int, err error) {
	rss, err = n.rssOf(func(pid int) bool {
		exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
		if err == nil && filepath.Base(exe) == name {
			count++
			return true
		}
		return false
	})
	return rss, count, err
}

// rssOf sums the resident memory of the node's processes that keep says to.
func (n *Node) rssOf(keep func(pid int) bool) (uint64, error) {
	inode, err := n.mountns.inode()
	if err != nil {
		return 0, err
	}
	want := fmt.Sprintf("mnt:[%d]", inode)
	pids := map[int]bool{}
	for _, pid := range n.cgroups.pids() {
		pids[pid] = true
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			if ns, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "mnt")); err == nil && ns == want {
				pids[pid] = true
			}
		}
	}
	var total uint64
	for pid := range pids {
		if !keep(pid) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
		if err != nil {
			continue // exited meanwhile
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseUint(f[1], 10, 64)
				total += kb * 1024
			}
		}
	}
	return total, nil
}
