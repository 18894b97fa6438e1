package realnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns` keeps its named network namespaces.
const netnsDir = "/run/netns"

// netns is a named network namespace the harness created.
type netns struct {
	name string
	fd   *os.File // the namespace, held open for setns
	// mountedDir: `ip netns add` bind-mounted netnsDir onto itself (it does
	// so when netnsDir is not yet a mount point); delete undoes it.
	mountedDir bool
}

// createNetns adds the named network namespace.
func createNetns(ctx context.Context, name string) (*netns, error) {
	wasMounted := isMountPoint(netnsDir)
	if err := run(ctx, "ip", "netns", "add", name); err != nil {
		return nil, err
	}
	n := &netns{name: name, mountedDir: !wasMounted && isMountPoint(netnsDir)}
	f, err := os.Open(n.path())
	if err != nil {
		return nil, errors.Join(err, n.delete(context.Background()))
	}
	n.fd = f
	return n, nil
}

// path is the namespace's file, for nsenter --net.
func (n *netns) path() string { return filepath.Join(netnsDir, n.name) }

// delete removes the namespace; its interfaces, addresses, routes and
// iptables rules go with it once no process is left inside.
func (n *netns) delete(ctx context.Context) error {
	if n == nil {
		return nil
	}
	if n.fd != nil {
		_ = n.fd.Close()
	}
	if _, err := os.Stat(n.path()); err == nil {
		if err := run(ctx, "ip", "netns", "delete", n.name); err != nil {
			return err
		}
	}
	return n.unmountDir()
}

// unmountDir removes the bind mount of netnsDir that creating the namespace
// made, once no namespace (another node's included) is left in it.
func (n *netns) unmountDir() error {
	if !n.mountedDir || !isMountPoint(netnsDir) {
		return nil
	}
	if entries, err := os.ReadDir(netnsDir); err != nil || len(entries) > 0 {
		return err
	}
	if err := unix.Unmount(netnsDir, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("unmounting %s: %w", netnsDir, err)
	}
	return nil
}

// do runs fn on an OS thread switched into the namespace, so that sockets
// fn opens belong to it; the thread is switched back afterwards (or, if
// that fails, retired with its goroutine).
func (n *netns) do(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			errc <- err
			return
		}
		defer self.Close()
		if err := unix.Setns(int(n.fd.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("entering network namespace %s: %w", n.name, err)
			return
		}
		errc <- fn()
		if unix.Setns(int(self.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
	}()
	return <-errc
}

// DialContext opens a connection from inside the namespace: use it as a
// client's dialer to reach the node's addresses.
func (n *netns) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := n.do(func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// Listen opens a listener inside the namespace, served by this process:
// Pods reach it on the node's address.
func (n *netns) Listen(network, addr string) (net.Listener, error) {
	var l net.Listener
	err := n.do(func() error {
		var err error
		l, err = net.Listen(network, addr)
		return err
	})
	return l, err
}
