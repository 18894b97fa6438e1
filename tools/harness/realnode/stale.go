package realnode

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// nodePrefix starts the name of every node's directory, network namespace
// and cgroup root (magos-node-<random>).
const nodePrefix = "magos-node-"

// sweepStale removes what nodes whose test process died (killed, out of
// time) left on the host, found by their directory, network namespace or
// cgroups: their Pods' processes and cgroups, mount
// namespace, network namespace and directory (the directory stays under
// MAGOS_REALNODE_KEEP). Start calls it holding the one-node-at-a-time
// lock, so every node found is stale. Kernel settings such a node changed
// cannot be restored: their values before it are lost with it.
func sweepStale(logf func(string, ...any)) error {
	ids := map[string]bool{}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), nodePrefix+"*"))
	for _, d := range dirs {
		ids[filepath.Base(d)] = true
	}
	if entries, err := os.ReadDir(netnsDir); err == nil {
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), nodePrefix) {
				ids[e.Name()] = true
			}
		}
	}
	// A node whose directory is gone may still hold cgroups, and in them
	// its Pods' processes.
	if mounts, err := cgroupMounts(); err == nil {
		for _, m := range mounts {
			found, _ := filepath.Glob(filepath.Join(m, nodePrefix+"*"))
			for _, d := range found {
				ids[filepath.Base(d)] = true
			}
		}
	}
	var errs []error
	for id := range ids {
		logf("realnode: removing what the stopped node %s left on the host", id)
		errs = append(errs, staleNode(id).Stop())
	}
	return errors.Join(errs...)
}

// staleNode is a Node for what node id left: Stop removes it as it removes
// a running node.
func staleNode(id string) *Node {
	n := &Node{Dir: filepath.Join(os.TempDir(), id), netns: &netns{name: id, mountedDir: true}}
	n.mountns = &mountns{dir: filepath.Join(n.Dir, "ns")}
	c := &cgroupRoot{name: id}
	if mounts, err := cgroupMounts(); err == nil {
		for _, m := range mounts {
			if d := filepath.Join(m, id); pathExists(d) {
				c.dirs = append(c.dirs, d)
			}
		}
	}
	n.cgroups = c
	return n
}

// pathExists reports whether p exists (a dangling link included).
func pathExists(p string) bool { _, err := os.Lstat(p); return err == nil }
