// Command rollout-controller reconciles magos.dev Rollouts.
package main

import (
	"os"

	"github.com/magos-dev/magos/controllers/internal/rollout"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

func main() {
	os.Exit(setup.Run("rollout", setup.RegisterFunc(rollout.Register)))
}
