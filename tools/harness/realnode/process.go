package realnode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is one of the node's long-running programs.
type process struct {
	name string
	// argv is what start was given, to start it again (Restart).
	argv []string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// enter returns the nsenter arguments that run a program inside the
// node's network namespace and, if mnt is set, its mount namespace.
func (n *Node) enter(mnt bool) []string {
	args := []string{"nsenter", "--net=" + n.netns.path()}
	if mnt {
		args = append(args, "--mount="+n.mountns.path())
	}
	return append(args, "--")
}

// Command prepares a program to run inside the node's network namespace
// (not its mount namespace: it sees the host's files), e.g. helm or
// kubectl with Kubeconfig.
func (n *Node) Command(name string, args ...string) *exec.Cmd {
	argv := append(n.enter(false), append([]string{name}, args...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// start runs a node program in the node's namespaces, its output in
// logs/<name>.log. A program that exits before Stop is an error Stop
// reports and the node's health checks see.
func (n *Node) start(name string, argv ...string) (*process, error) {
	logPath := filepath.Join(n.Dir, "logs", name+".log")
	if n.restarts > 0 {
		logPath = filepath.Join(n.Dir, "logs", fmt.Sprintf("%s.%d.log", name, n.restarts))
	}
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	full := append(n.enter(true), argv...)
	cmd := exec.Command(full[0], full[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	// The node dies with the test process even if it cannot run Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, argv: argv, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	n.procs = append(n.procs, p)
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM and, after grace, SIGKILL, and waits for the process.
func (p *process) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tail returns the last lines of the process's log, for error messages.
func (p *process) tail(lines int) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// killNamespace kills every process left in the node's mount namespace
// (containerd's shims, which outlive containerd) until none is left.
func killNamespace(inode uint64, timeout time.Duration) error {
	want := fmt.Sprintf("mnt:[%d]", inode)
	deadline := time.Now().Add(timeout)
	for {
		var left []int
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return err
		}
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if ns, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "mnt")); err == nil && ns == want {
				left = append(left, pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("processes " + fmt.Sprint(left) + " are still in the node's mount namespace")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
