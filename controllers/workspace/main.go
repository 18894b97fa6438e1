// Command workspace-controller reconciles magos.dev Workspaces.
package main

import (
	"os"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/workspace"
)

func main() {
	os.Exit(setup.Run("workspace", &magosv1.Workspace{}, workspace.NewController()))
}
