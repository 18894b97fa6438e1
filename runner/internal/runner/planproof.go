package runner

import (
	"fmt"
	"os"
	"path/filepath"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/runner/internal/planfile"
	"github.com/magos-dev/magos/runner/internal/report"
)

// savedPlan reads the configuration snapshot and backend of the stored
// plan, once per run, and the plan file rebuilt from the entries read
// (planfile.File.Binary), which is the one the engine renders and applies.
// A plan file with an entry twice or one the engine does not write is
// refused.
func (r *runner) savedPlan(stored *planstore.Plan) (*planfile.File, error) {
	if r.saved == nil {
		f, err := planfile.Read(stored.Binary)
		if err != nil {
			return nil, report.Failed(magosv1.ReasonPlanBinaryMismatch, fmt.Errorf("the stored binary plan %s: %w; nothing was applied", stored.ID, err))
		}
		r.saved = f
	}
	return r.saved, nil
}

// checkPlanFile checks what the engine applies from the saved plan besides
// the plan itself, which checkBinaryPlan proved: the configuration
// snapshot must be the digest-verified artifact's configuration (with the
// modules this run's init installed), and the backend the one this run
// configured. The plan JSON shows neither: a plan file whose snapshot
// changed a local or a provisioner command, or whose backend sends the
// state elsewhere, renders to the approved digest.
func (r *runner) checkPlanFile(configDir string, stored *planstore.Plan) error {
	f, err := r.savedPlan(stored)
	if err != nil {
		return err
	}
	planID := stored.ID
	refuse := func(err error) error {
		return report.Failed(magosv1.ReasonPlanBinaryMismatch,
			fmt.Errorf("the stored binary plan %s is not the plan of this configuration: %w; nothing was applied", planID, err))
	}
	if err := f.CheckSnapshot(filepath.Join(r.cfg.WorkDir, "src"), configDir); err != nil {
		return refuse(err)
	}
	if r.cfg.BackendConfig == "" {
		if err := f.CheckRunnerBackend(); err != nil {
			return refuse(err)
		}
		return nil
	}
	block, err := os.ReadFile(r.cfg.BackendConfig)
	if err != nil {
		return report.Failed(magosv1.ReasonBackendFailed, fmt.Errorf("reading the backend configuration: %w", err))
	}
	if err := f.CheckUserBackend(block); err != nil {
		return refuse(err)
	}
	return nil
}
