// Command runner executes one Workspace run (plan, apply or destroy) inside
// a Kubernetes Job. The controller passes the run's parameters through the
// environment; the runner reports back through its termination message.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/runner/internal/runner"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `Usage: runner <command>

Runs one phase of a Magos Workspace inside its Job.

Commands:
  plan      fetch the source artifact, run the engine's plan and store the plan
            (MAGOS_PLAN_MODE=Destroy: plan the destroy of everything in the state)
  apply     apply exactly the stored plan whose digest the controller approved
  plan-apply
            plan, store the plan and apply it in the same run (the fast path,
            where nothing decides on the plan)
  destroy   destroy everything in the Workspace's state, without a plan
  version   print the runner's version
  reach URL ask URL once, as a run fetches its artifact, and say whether it
            answered (kubectl magos check; exit 3 if not)

The controller sets the run's parameters in the environment (MAGOS_*).
The run's result is written as JSON to $MAGOS_TERMINATION_MESSAGE
(default /dev/termination-log). Exit codes: 0 succeeded, 1 failed,
2 usage error, 4 the plan is stale, 5 the state is locked.
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
	case "version", "--version":
		fmt.Fprintln(stdout, "runner", version)
		return 0
	case magosv1.RunnerReach:
		if len(args) != 2 {
			fmt.Fprintf(stderr, "runner reach: want one URL\n\n%s", usage)
			return magosv1.ExitUsage
		}
		return reach(args[1], stdout, stderr)
	case magosv1.RunPlan, magosv1.RunApply, magosv1.RunDestroy, magosv1.RunPlanApply:
		if len(args) > 1 {
			fmt.Fprintf(stderr, "runner %s: unexpected arguments %q\n\n%s", args[0], args[1:], usage)
			return 2
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return runner.Run(ctx, args[0], os.Getenv, stdout, stderr, runner.Options{Version: version})
	default:
		fmt.Fprintf(stderr, "runner: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}
