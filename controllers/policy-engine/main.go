// Command policy-engine evaluates plans against Kyverno ValidatingPolicies
// for the workspace-controller, which starts it the first time a plan has
// policies to pass and talks to it over stdin and stdout
// (package apis/policyprotocol). It keeps Kyverno's
// engine, and the memory it takes, out of the controller's own process. It
// exits when its stdin closes.
//
// Before it reads anything it offers itself first to the kernel's
// out-of-memory killer (oom_score_adj 1000), so a costly evaluation that
// exhausts the container's memory ends the engine, which the controller
// starts again, never the controller; then it sandboxes itself
// (policyengine.Sandbox): no file can be opened, no TCP connection made. `policy-engine sandbox-check
// FILE HOST:PORT` shows it: it opens FILE and dials HOST:PORT, sandboxes
// itself, tries both again and exits 0 only if both now fail.
// `policy-engine sandbox-status` sandboxes itself the same way and writes
// what the sandbox took (policyprotocol.Sandbox) on stdout: on a kernel
// before Linux 6.7 it cannot restrict TCP, before 5.13 nothing. The
// workspace-controller runs it at start.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
	_ "time/tzdata" // named time zones for CEL: the sandboxed engine cannot read the system's zone files

	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/policyengine"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "sandbox-check" {
		os.Exit(sandboxCheck(os.Args[2], os.Args[3]))
	}
	if len(os.Args) == 2 && os.Args[1] == policyprotocol.SandboxStatusCommand {
		os.Exit(sandboxStatus())
	}
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: policy-engine (started by the workspace-controller; it reads requests on stdin)")
		os.Exit(2)
	}
	// Raising one's own score needs no privilege.
	if err := os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0); err != nil {
		fmt.Fprintln(os.Stderr, "policy-engine: not first for the out-of-memory killer:", err)
	}
	if sb, err := policyengine.Sandbox(); errors.Is(err, policyengine.ErrNoSandbox) {
		fmt.Fprintln(os.Stderr, "policy-engine: running without a sandbox:", err)
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "policy-engine:", err)
		os.Exit(1)
	} else if !sb.Complete() {
		fmt.Fprintln(os.Stderr, "policy-engine: running with an incomplete sandbox:", sb.Missing)
	}
	if err := policyengine.Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "policy-engine:", err)
		os.Exit(1)
	}
}

// sandboxStatus sandboxes the process and writes what the sandbox took;
// it returns 1 only when sandboxing failed half-way (the process may then
// be restricted in part, which no report describes).
func sandboxStatus() int {
	sb, err := policyengine.Sandbox()
	if err != nil && !errors.Is(err, policyengine.ErrNoSandbox) {
		fmt.Fprintln(os.Stderr, "policy-engine:", err)
		return 1
	}
	if err := policyprotocol.WriteSandbox(os.Stdout, sb); err != nil {
		fmt.Fprintln(os.Stderr, "policy-engine:", err)
		return 1
	}
	return 0
}

// sandboxCheck reads file and dials addr before and after Sandbox, prints
// what happened, and returns 0 when both worked before and fail after.
func sandboxCheck(file, addr string) int {
	try := func() (readErr, dialErr error) {
		if _, readErr = os.ReadFile(file); readErr == nil {
			fmt.Println("read", file)
		}
		conn, dialErr := net.DialTimeout("tcp", addr, 5*time.Second)
		if dialErr == nil {
			fmt.Println("dialed", addr)
			conn.Close()
		}
		return readErr, dialErr
	}
	if r, d := try(); r != nil || d != nil {
		fmt.Println("before the sandbox:", r, d)
		return 1
	}
	if _, err := policyengine.Sandbox(); err != nil {
		fmt.Println("sandbox:", err)
		return 1
	}
	r, d := try()
	fmt.Println("sandboxed: read:", r, "dial:", d)
	if r == nil || d == nil {
		return 1
	}
	return 0
}
