// Command kubectl-magos is the Magos kubectl plugin: `kubectl magos …`.
package main

import (
	"os"

	"github.com/magos-dev/magos/controllers/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
