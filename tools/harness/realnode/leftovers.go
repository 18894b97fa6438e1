package realnode

import (
	"os"
	"slices"
	"strings"
)

// Leftovers lists what a stopped node left on the host: its directory, its
// network namespace, its cgroups, mounts under its directory, kernel
// settings that differ from before it started. Empty means clean.
func (n *Node) Leftovers() []string {
	var left []string
	if n.Dir != "" && os.Getenv("MAGOS_REALNODE_KEEP") == "" && pathExists(n.Dir) {
		left = append(left, "directory "+n.Dir)
	}
	if n.netns != nil && pathExists(n.netns.path()) {
		left = append(left, "network namespace "+n.netns.path())
	}
	if n.cgroups != nil {
		for _, d := range n.cgroups.dirs {
			if pathExists(d) {
				left = append(left, "cgroup "+d)
			}
		}
	}
	if n.mountns != nil {
		for _, p := range n.mountns.made {
			if pathExists(p) {
				left = append(left, "mount point "+p)
			}
		}
	}
	for _, m := range mountPoints() {
		if n.Dir != "" && strings.HasPrefix(m, n.Dir) {
			left = append(left, "mount "+m)
		}
	}
	if n.netns != nil && n.netns.mountedDir && isMountPoint(netnsDir) && emptyDir(netnsDir) {
		left = append(left, "mount "+netnsDir)
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

// mountPoints lists the mount points of this process's mount namespace.
func mountPoints() []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var points []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			points = append(points, f[4])
		}
	}
	return points
}

// isMountPoint reports whether path is a mount point here.
func isMountPoint(path string) bool {
	return slices.Contains(mountPoints(), path)
}

// emptyDir reports whether dir exists and holds nothing.
func emptyDir(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) == 0
}
