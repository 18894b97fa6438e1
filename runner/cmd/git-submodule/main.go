// Command git-submodule stands in for git's `git submodule` in the runner
// image, which has no shell to run git's own git-submodule script.
// OpenTofu runs `git submodule update --init --recursive` after it clones a
// git:: module source; update is all the script does itself for that, by
// calling git's built-in `git submodule--helper update` with the same
// options, so this command does the same. Other subcommands fail with a
// message.
package main

import (
	"fmt"
	"os"
	"os/exec"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run handles git-submodule's arguments and returns its exit code.
func run(args []string) int {
	cmd, err := helperCommand(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "git submodule:", err)
		return 1
	}
	c := exec.Command(cmd[0], cmd[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := c.Run(); err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "git submodule:", err)
		return 1
	}
	return 0
}

// helperCommand is the git command that does what args ask: quiet flags
// before the subcommand are passed on, and update's options as they are.
func helperCommand(args []string) ([]string, error) {
	var quiet []string
	for len(args) > 0 && (args[0] == "-q" || args[0] == "--quiet") {
		quiet = append(quiet, "--quiet")
		args = args[1:]
	}
	if len(args) == 0 || args[0] != "update" {
		sub := "(none)"
		if len(args) > 0 {
			sub = args[0]
		}
		return nil, fmt.Errorf("only \"update\" is available in this image, not %s", sub)
	}
	cmd := append([]string{"git", "submodule--helper", "update"}, quiet...)
	return append(cmd, args[1:]...), nil
}
