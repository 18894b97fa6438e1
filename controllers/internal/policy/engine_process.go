package policy

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// engineProcess is one running policy engine and the pipes to it.
type engineProcess struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *bufio.Reader
	// out is stdout's file, closed once the process is gone.
	out *os.File
	// exited is closed once the process has exited and been waited for;
	// waitErr is then how it exited.
	exited  chan struct{}
	waitErr error
}

// startEngine starts the policy engine at path. The engine inherits the
// caller's stderr (it writes there only if it fails) and exits when its
// stdin closes, so it also ends with the process that started it.
func startEngine(path string) (*engineProcess, error) {
	if path == "" {
		return nil, errors.New("no policy engine binary is configured (--policy-engine-path)")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, errors.Join(err, inR.Close(), inW.Close())
	}
	cmd := exec.Command(path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, os.Stderr
	err = cmd.Start()
	// The engine holds its ends now; closing ours lets each side see the
	// other go.
	closeErr := errors.Join(inR.Close(), outW.Close())
	if err != nil {
		return nil, errors.Join(fmt.Errorf("starting the policy engine %s: %w", path, err), inW.Close(), outR.Close())
	}
	if closeErr != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, errors.Join(closeErr, inW.Close(), outR.Close())
	}
	p := &engineProcess{cmd: cmd, stdin: inW, out: outR, stdout: bufio.NewReaderSize(outR, 64<<10), exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// alive reports whether the engine has not exited.
func (p *engineProcess) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop kills the engine if it still runs, waits for it (so no zombie is
// left) and closes the pipes.
func (p *engineProcess) stop() {
	if p.alive() {
		_ = p.cmd.Process.Kill()
	}
	<-p.exited
	_ = p.stdin.Close()
	_ = p.out.Close()
}

// exitStatus says how the engine exited, or that it still runs.
func (p *engineProcess) exitStatus() string {
	if p.alive() {
		return "still running"
	}
	if p.waitErr == nil {
		return "exited"
	}
	return p.waitErr.Error()
}
