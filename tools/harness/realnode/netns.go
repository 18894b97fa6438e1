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
}

// createNetns adds the named network namespace.
func createNetns(ctx context.Context, name string) (*netns, error) {
	if err := run(ctx, "ip", "netns", "add", name); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(netnsDir, name))
	if err != nil {
		return nil, errors.Join(err, run(context.Background(), "ip", "netns", "delete", name))
	}
	return &netns{name: name, fd: f}, nil
}

// path is the namespace's file, for nsenter --net.
func (n *netns) path() string { return filepath.Join(netnsDir, n.name) }

// delete removes the namespace; its interfaces, addresses, routes and
// iptables rules go with it once no process is left inside.
func (n *netns) delete(ctx context.Context) error {
	if n == nil {
		return nil
	}
	_ = n.fd.Close()
	if _, err := os.Stat(n.path()); os.IsNotExist(err) {
		return nil
	}
	return run(ctx, "ip", "netns", "delete", n.name)
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
