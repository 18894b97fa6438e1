package policyengine

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/magos-dev/magos/apis/policyprotocol"
)

// Sandbox takes from this process, every thread of it, the right to open
// any file and, where the kernel can (Landlock ABI 4, Linux 6.7), to bind
// or connect TCP sockets: what it reads is plan JSON and policies on
// stdin, what it writes is verdicts on stdout, both already open. The
// engine runs in the workspace-controller's container, beside the
// controller's ServiceAccount token; sandboxed, a policy (or a flaw in its
// evaluation) cannot read that token or reach the apiserver or anything
// else. It needs Landlock (Linux 5.13) and a binary without cgo
// (AllThreadsSyscall); ErrNoSandbox says it is not there. It returns what
// the sandbox took, which an older kernel makes less than both: the
// engine reports it (policyprotocol.SandboxStatusCommand), and the
// workspace-controller exports it and refuses to start with less unless
// allowed.
func Sandbox() (policyprotocol.Sandbox, error) {
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return none(fmt.Errorf("%w: Landlock: %v", ErrNoSandbox, errno))
	}
	attr := unix.LandlockRulesetAttr{Access_fs: filesystemRights(int(abi))}
	if abi >= landlockNetABI {
		attr.Access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	// A ruleset with no rule: every handled access is denied everywhere.
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return none(fmt.Errorf("%w: creating the Landlock ruleset: %v", ErrNoSandbox, errno))
	}
	defer unix.Close(int(fd))
	// Landlock restricts the calling thread: every thread of the Go
	// runtime must call it (and may not gain privileges first).
	if _, _, errno := syscall.AllThreadsSyscall(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); errno != 0 {
		return none(fmt.Errorf("%w: no_new_privs: %v", ErrNoSandbox, errno))
	}
	if _, _, errno := syscall.AllThreadsSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); errno != 0 {
		return none(fmt.Errorf("restricting the policy engine with Landlock: %v", errno))
	}
	return landlockSandbox(int(abi)), nil
}

// none is the sandbox that took nothing, with err as what is missing.
func none(err error) (policyprotocol.Sandbox, error) {
	return policyprotocol.Sandbox{Missing: err.Error()}, err
}

// filesystemRights are every filesystem access right Landlock ABI abi
// knows.
func filesystemRights(abi int) uint64 {
	rights := uint64(unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM)
	if abi >= 2 {
		rights |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		rights |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		rights |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return rights
}
