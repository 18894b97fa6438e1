package e2e

import (
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// keptListener holds a loopback socket for a whole test, so a controller
// stopped and started again serves on the same address without ever
// releasing it (a released port may be taken by any process meanwhile).
// Each start serves on a session of it; closing a session leaves the
// socket open.
type keptListener struct {
	ln    net.Listener
	conns chan net.Conn
}

// newKeptListener opens a loopback socket, closed when t ends.
func newKeptListener(t testing.TB) *keptListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	k := &keptListener{ln: ln, conns: make(chan net.Conn)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(k.conns)
				return
			}
			k.conns <- c
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return k
}

// Addr is the socket's address.
func (k *keptListener) Addr() string { return k.ln.Addr().String() }

// session is a listener for one server's run on the socket.
func (k *keptListener) session() net.Listener {
	return &listenerSession{k: k, done: make(chan struct{})}
}

type listenerSession struct {
	k    *keptListener
	done chan struct{}
	once sync.Once
}

func (s *listenerSession) Accept() (net.Conn, error) {
	select {
	case c, ok := <-s.k.conns:
		if !ok {
			return nil, net.ErrClosed
		}
		return c, nil
	case <-s.done:
		return nil, net.ErrClosed
	}
}

func (s *listenerSession) Close() error {
	s.once.Do(func() { close(s.done) })
	return nil
}

func (s *listenerSession) Addr() net.Addr { return s.k.ln.Addr() }
