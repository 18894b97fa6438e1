package main

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pauseBinary builds this command into a temporary directory.
func pauseBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pause")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

func TestPauseExitsCleanlyOnTermination(t *testing.T) {
	bin := pauseBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin)
			stderr, err := cmd.StderrPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			// pause handles the signals once it has said so.
			line, err := bufio.NewReader(stderr).ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "pause: running until SIGTERM or SIGINT\n", line)
			require.NoError(t, cmd.Process.Signal(sig))
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				assert.NoError(t, err, "pause exits 0")
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("pause did not exit on " + sig.String())
			}
		})
	}
}

func TestPauseRefusesArguments(t *testing.T) {
	out, err := exec.Command(pauseBinary(t), "extra").CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Contains(t, string(out), "takes no arguments")
}
