// Command variableset-controller reconciles magos.dev VariableSets.
package main

import (
	"os"

	"github.com/magos-dev/magos/controllers/internal/setup"
	"github.com/magos-dev/magos/controllers/internal/variableset"
)

func main() {
	os.Exit(setup.Run("variableset", setup.RegisterFunc(variableset.Register)))
}
