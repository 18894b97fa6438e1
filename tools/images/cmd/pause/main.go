// Command pause is the sandbox ("pause") container of the Pods on the test
// node: it holds the Pod's namespaces open, reaps the children it inherits
// as PID 1 of the Pod's PID namespace, and exits 0 on SIGTERM or SIGINT.
// `make image-pause` builds it into ghcr.io/magos-dev/magos-pause.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if len(os.Args) > 1 {
		if os.Args[1] == "-v" || os.Args[1] == "--version" {
			fmt.Println("pause", version)
			return
		}
		fmt.Fprintf(os.Stderr, "pause: takes no arguments (-v prints the version)\n")
		os.Exit(2)
	}
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	fmt.Fprintln(os.Stderr, "pause: running until SIGTERM or SIGINT")
	for s := range signals {
		if s == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap waits for every child that has exited, so none stays a zombie.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
