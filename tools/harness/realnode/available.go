package realnode

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requiredCommands are what the Debian packages of `make node-packages`
// provide.
var requiredCommands = []string{"containerd", "containerd-shim-runc-v2", "ctr", "runc", "iptables", "ip", "nsenter", "unshare", "sysctl"}

// cniPlugins are the CNI plugins the node's network uses.
var cniPlugins = []string{"bridge", "host-local", "loopback"}

// Available reports whether this machine can run a node with the binaries
// of binDir; the error says what is missing.
func Available(binDir string) error {
	if os.Geteuid() != 0 {
		return errors.New("the real-node tier needs root (network and mount namespaces, cgroups, containerd)")
	}
	var missing []string
	for _, c := range requiredCommands {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c)
		}
	}
	for _, p := range cniPlugins {
		if _, err := os.Stat(filepath.Join("/usr/lib/cni", p)); err != nil {
			missing = append(missing, "/usr/lib/cni/"+p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s: run `make node-packages`", strings.Join(missing, ", "))
	}
	for _, b := range []string{"etcd", "kube-apiserver", "kube-node"} {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			return fmt.Errorf("%s not found: run `make node`", filepath.Join(binDir, b))
		}
	}
	if !cgroupV1() {
		if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
			return errors.New("no cgroup hierarchy found under /sys/fs/cgroup")
		}
	}
	if _, err := os.Stat(netnsDir); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// Require skips t when the machine cannot run a node and the reason is not
// having root on a developer machine; under CI=true, or with root but
// something missing, it fails t instead, so the tier is never silently
// absent where it should run.
func Require(t testing.TB, binDir string) {
	t.Helper()
	err := Available(binDir)
	if err == nil {
		return
	}
	if os.Getenv("CI") != "true" && os.Geteuid() != 0 {
		t.Skipf("real-node tier skipped: %v", err)
	}
	t.Fatalf("real-node tier cannot run: %v", err)
}
