// Command variableset-controller reconciles magos.dev VariableSets.
package main

import (
	"os"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/variableset"
)

func main() {
	os.Exit(setup.Run("variableset", &magosv1.VariableSet{}, setup.RegisterFunc(variableset.Register)))
}
