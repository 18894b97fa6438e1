package gitserver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path"
	"strings"

	"golang.org/x/crypto/ssh"
)

// ServeSSH serves the repositories for fetching over SSH on l until l is
// closed, to clients that authenticate with ClientKey (any user name).
// Only git-upload-pack runs: the server is read-only.
func (s *Server) ServeSSH(l net.Listener) error {
	want, err := ssh.NewPublicKey(s.clientKey.Public())
	if err != nil {
		return err
	}
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if bytes.Equal(key.Marshal(), want.Marshal()) {
				return &ssh.Permissions{}, nil
			}
			return nil, errors.New("unknown key")
		},
	}
	cfg.AddHostKey(s.hostKey)
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go s.serveSSHConn(c, cfg)
	}
}

func (s *Server) serveSSHConn(c net.Conn, cfg *ssh.ServerConfig) {
	conn, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		s.refused.Add(1)
		_ = c.Close()
		return
	}
	defer conn.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, requests, err := nc.Accept()
		if err != nil {
			return
		}
		go s.serveSession(ch, requests)
	}
}

// serveSession runs one exec request of git-upload-pack and reports its
// exit status.
func (s *Server) serveSession(ch ssh.Channel, requests <-chan *ssh.Request) {
	defer ch.Close()
	for req := range requests {
		if req.Type != "exec" {
			_ = req.Reply(false, nil)
			continue
		}
		var payload struct{ Command string }
		if err := ssh.Unmarshal(req.Payload, &payload); err != nil {
			_ = req.Reply(false, nil)
			return
		}
		repo, err := s.uploadPackRepo(payload.Command)
		if err != nil {
			_ = req.Reply(false, nil)
			fmt.Fprintln(ch.Stderr(), err)
			return
		}
		_ = req.Reply(true, nil)
		cmd := exec.Command(s.git, "upload-pack", repo)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = ch, ch, ch.Stderr()
		code := 0
		if err := cmd.Run(); err != nil {
			code = 1
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			}
		}
		status := make([]byte, 4)
		binary.BigEndian.PutUint32(status, uint32(code))
		_, _ = ch.SendRequest("exit-status", false, status)
		return
	}
}

// uploadPackRepo reads the repository path out of the command a git client
// sends ("git-upload-pack '/modules.git'").
func (s *Server) uploadPackRepo(command string) (string, error) {
	prog, arg, ok := strings.Cut(command, " ")
	if !ok || prog != "git-upload-pack" {
		return "", fmt.Errorf("only git-upload-pack is served, not %q", command)
	}
	name := strings.Trim(arg, "'\"")
	name = path.Clean("/" + name)
	return s.repoPath(strings.TrimPrefix(name, "/")), nil
}
