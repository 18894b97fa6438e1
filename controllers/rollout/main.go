// Command rollout-controller reconciles magos.dev Rollouts.
package main

import (
	"os"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/rollout"
	"github.com/magos-dev/magos/controllers/internal/setup"
)

func main() {
	os.Exit(setup.Run("rollout", &magosv1.Rollout{}, setup.RegisterFunc(rollout.Register)))
}
