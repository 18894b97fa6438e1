// Command kubectl-magos is the Magos kubectl plugin: `kubectl magos …`.
package main

import (
	"os"

	"github.com/magos-dev/magos/cli/internal/command"
)

func main() { os.Exit(command.Main(os.Args[1:])) }
