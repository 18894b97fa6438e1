package realnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// hostPaths are directories containerd, the CNI plugins and the kubelet use
// at fixed places whatever their configuration says. Inside the node's
// mount namespace each is a tmpfs of its own, so nothing they write there
// reaches the host; a directory the host lacks is created as the mount
// point and removed again by Stop.
var hostPaths = []string{
	"/run",                // containerd shim sockets, runc state, pinned netns, xtables.lock
	"/var/lib/cni",        // CNI result cache
	"/var/log/containers", // kubelet's container log links
}

// mountns is a private mount namespace that outlives the command that made
// it: it is bound to a file, and processes join it with nsenter --mount.
type mountns struct {
	dir     string   // holds the binding; a private mount of its own
	created []string // mount points the host lacked, until removed
	made    []string // every mount point it created, for Leftovers
}

// createMountns makes a private mount namespace bound to dir/mnt, with a
// fresh tmpfs on each host path and, inside it, the symbolic links of
// links (link path -> target).
func createMountns(ctx context.Context, dir string, links map[string]string) (*mountns, error) {
	m := &mountns{dir: dir}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// unshare --mount=FILE needs FILE on a mount with private propagation.
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		return nil, fmt.Errorf("binding %s: %w", dir, err)
	}
	if err := unix.Mount("", dir, "", unix.MS_PRIVATE, ""); err != nil {
		return nil, errors.Join(fmt.Errorf("making %s private: %w", dir, err), m.destroy())
	}
	if err := os.WriteFile(m.path(), nil, 0o600); err != nil {
		return nil, errors.Join(err, m.destroy())
	}
	var script []string
	for _, p := range hostPaths {
		if _, err := os.Stat(p); os.IsNotExist(err) {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return nil, errors.Join(err, m.destroy())
			}
			m.created = append(m.created, p)
			m.made = append(m.made, p)
		}
		script = append(script, fmt.Sprintf("mount -t tmpfs -o mode=0755 tmpfs %s", p))
	}
	for link, target := range links {
		script = append(script, fmt.Sprintf("mkdir -p %s && ln -s %s %s", filepath.Dir(link), target, link))
	}
	if err := run(ctx, "unshare", "--mount="+m.path(), "--propagation", "private", "--",
		"sh", "-ec", strings.Join(script, "\n")); err != nil {
		return nil, errors.Join(err, m.destroy())
	}
	return m, nil
}

// path is the namespace's file, for nsenter --mount.
func (m *mountns) path() string { return filepath.Join(m.dir, "mnt") }

// inode identifies the namespace, as /proc/<pid>/ns/mnt shows it.
func (m *mountns) inode() (uint64, error) {
	fi, err := os.Stat(m.path())
	if err != nil {
		return 0, err
	}
	return fi.Sys().(*syscall.Stat_t).Ino, nil
}

// destroy unbinds the namespace (it goes away with every mount inside once
// no process is left in it) and removes the mount points it created.
func (m *mountns) destroy() error {
	if m == nil {
		return nil
	}
	var errs []error
	for _, p := range []string{m.path(), m.dir} {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
	}
	for _, p := range m.created {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	m.created = nil
	return errors.Join(errs...)
}
