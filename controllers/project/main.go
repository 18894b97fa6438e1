// Command project-controller reconciles magos.dev Projects.
package main

import (
	"os"

	"github.com/magos-dev/magos/controllers/internal/project"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

func main() {
	os.Exit(setup.Run("project", setup.RegisterFunc(project.Register)))
}
