// Command workspaceset-controller generates magos.dev Workspaces from
// WorkspaceSets.
package main

import (
	"os"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/workspaceset"
)

func main() {
	os.Exit(setup.Run("workspaceset", &magosv1.WorkspaceSet{}, workspaceset.NewController()))
}
