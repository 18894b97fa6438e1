package realnode

import (
	"os"
	"strings"
)

// Leftovers lists what a stopped node left on the host: its directory, its
// network namespace, its cgroups, mounts under its directory, kernel
// settings that differ from before it started. Empty means clean.
func (n *Node) Leftovers() []string {
	var left []string
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	if n.Dir != "" && os.Getenv("MAGOS_REALNODE_KEEP") == "" && exists(n.Dir) {
		left = append(left, "directory "+n.Dir)
	}
	if n.netns != nil && exists(n.netns.path()) {
		left = append(left, "network namespace "+n.netns.path())
	}
	if n.cgroups != nil {
		for _, d := range n.cgroups.dirs {
			if exists(d) {
				left = append(left, "cgroup "+d)
			}
		}
	}
	if n.mountns != nil {
		for _, p := range n.mountns.made {
			if exists(p) {
				left = append(left, "mount point "+p)
			}
		}
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil && n.Dir != "" {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], n.Dir) {
				left = append(left, "mount "+f[4])
			}
		}
	}
	if n.saved != nil {
		now, err := saveSysctls(kernelTunables)
		if err == nil {
			for k, v := range n.saved {
				if now[k] != v {
					left = append(left, "kernel setting "+strings.ReplaceAll(k, "/", ".")+"="+now[k]+" (was "+v+")")
				}
			}
		}
	}
	return left
}
