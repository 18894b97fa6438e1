// Command project-controller reconciles magos.dev Projects.
package main

import (
	"os"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/project"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

func main() {
	os.Exit(setup.Run("project", &magosv1.Project{}, setup.RegisterFunc(project.Register)))
}
