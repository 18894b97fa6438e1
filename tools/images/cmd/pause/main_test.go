package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
			// pause is ready once /proc shows SIGTERM as caught.
			require.NoError(t, cmd.Start())
			require.Eventually(t, func() bool { return catches(t, cmd.Process.Pid, syscall.SIGTERM) }, 10*time.Second, 10*time.Millisecond)
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

// catches reports whether process pid has a handler for sig (SigCgt in
// /proc/<pid>/status).
func catches(t *testing.T, pid int, sig syscall.Signal) bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if hex, ok := strings.CutPrefix(line, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			return err == nil && mask&(1<<(uint(sig)-1)) != 0
		}
	}
	return false
}
