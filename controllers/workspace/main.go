// Command workspace-controller reconciles magos.dev Workspaces.
package main

import (
	"os"

	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/workspace"
)

func main() {
	os.Exit(setup.Run("workspace", workspace.NewController()))
}
