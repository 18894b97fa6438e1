package runner

import (
	"context"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/runner/internal/engine"
)

// needsInit says whether the run must initialise the configuration
// directory. Plans and destroys always do. An apply of a stored plan does
// only when the plan was made with providers that init installed, or when
// the state lives in the Workspace's own backend (reading the outputs back
// needs it initialised): a saved plan carries the configuration snapshot,
// its modules, the dependency lock and the backend configuration, so with
// built-in providers and the state the runner serves, init would install
// nothing the apply uses, unless the plan has modules init installs:
// checkPlanFile compares those with what this run's init installs.
func (r *runner) needsInit(stored *planstore.Plan) bool {
	if r.cfg.Phase != magosv1.RunApply || stored == nil || r.backend == nil {
		return true
	}
	f, err := r.savedPlan(stored)
	if err != nil {
		return true
	}
	// Modules init installs are compared with the plan's snapshot only
	// once this run installed them itself.
	if f.NeedsInstalledModules() {
		return true
	}
	needs, err := engine.PlanNeedsProviders(f.Binary)
	if err != nil {
		r.log.Info("Initialising: the stored plan's dependency lock cannot be read", "error", err)
		return true
	}
	return needs
}

// init runs init in the configuration directory, once.
func (r *runner) init(ctx context.Context, eng *engine.Engine) error {
	if r.initialised {
		return nil
	}
	if err := timed(&r.result.Steps.Init, func() error { return eng.Init(ctx) }); err != nil {
		return r.engineError(magosv1.ReasonInitFailed, "init", err)
	}
	r.initialised = true
	return nil
}
