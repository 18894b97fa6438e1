// Command policy-engine evaluates plans against Kyverno ValidatingPolicies
// for the workspace-controller, which starts it the first time a plan has
// policies to pass and talks to it over stdin and stdout
// (controllers/internal/policy/engine_protocol.go). It keeps Kyverno's
// engine, and the memory it takes, out of the controller's own process. It
// exits when its stdin closes.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/magos-dev/magos/controllers/internal/policyengine"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: policy-engine (started by the workspace-controller; it reads requests on stdin)")
		os.Exit(2)
	}
	if err := policyengine.Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "policy-engine:", err)
		os.Exit(1)
	}
}
