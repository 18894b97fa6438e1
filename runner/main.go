// Command runner executes one Workspace run (plan, apply or destroy) inside
// a Kubernetes Job. The controller passes the run's parameters through the
// environment; the runner reports back through its termination message.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `Usage: runner <command>

Runs one phase of a Magos Workspace inside its Job.

Commands:
  plan      fetch the source artifact, run the engine's plan and store the plan
  apply     apply exactly the stored plan whose digest the controller approved
  destroy   destroy everything in the Workspace's state

The controller sets the run's parameters in the environment (MAGOS_*).
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "plan", "apply", "destroy":
		fmt.Fprintf(stderr, "runner %s: not available in this release\n", args[0])
		return 3
	default:
		fmt.Fprintf(stderr, "runner: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}
