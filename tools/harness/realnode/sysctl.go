package realnode

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// kernelTunables are the machine-wide settings a kubelet with
// protectKernelDefaults: false sets once at start (see the kubelet's
// setupKernelTunables). The harness saves them before the kubelet starts
// and writes them back once it has, and again on Stop.
var kernelTunables = []string{
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
}

// sysctls is a saved set of kernel settings.
type sysctls map[string]string

// saveSysctls reads the current value of each setting.
func saveSysctls(names []string) (sysctls, error) {
	s := sysctls{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("/proc/sys", n))
		if err != nil {
			return nil, err
		}
		s[n] = strings.TrimSpace(string(b))
	}
	return s, nil
}

// restore writes back every value that has changed.
func (s sysctls) restore() error {
	var errs []error
	for n, want := range s {
		p := filepath.Join("/proc/sys", n)
		b, err := os.ReadFile(p)
		if err == nil && strings.TrimSpace(string(b)) == want {
			continue
		}
		if err := os.WriteFile(p, []byte(want+"\n"), 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
