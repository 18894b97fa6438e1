package runner

import (
	"context"
	"fmt"
	"os"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/plansummary"
	"github.com/magos-dev/magos/runner/internal/engine"
	"github.com/magos-dev/magos/runner/internal/report"
)

// planApply is the fast path (magosv1.RunPlanApply): it plans, stores the
// plan for people to read, and applies that plan file in the same Pod.
// Nothing decided on the plan, so nothing is proved about it: the engine
// is not started to render it (the counts and the text are what it
// printed while it planned), and the apply needs no check of the stored
// plan, which this run wrote from the file it applies. A plan without
// changes is not applied, like any plan without changes.
func (r *runner) planApply(ctx context.Context, eng *engine.Engine, configDir string) error {
	planFile, err := r.planFile()
	if err != nil {
		return report.Failed(magosv1.ReasonPlanFailed, err)
	}
	r.log.Info("Planning, then applying the plan in this run (no decision rests on it)", "planID", r.cfg.PlanID)
	var hasChanges bool
	printed := &printedOutput{}
	err = timed(&r.result.Steps.Engine, func() (err error) {
		hasChanges, err = eng.Plan(ctx, planFile, engine.PlanOptions{Printed: printed})
		return err
	})
	if err != nil {
		return r.engineError(magosv1.ReasonPlanFailed, "plan", err)
	}
	planBin, err := os.ReadFile(planFile)
	if err != nil {
		return report.Failed(magosv1.ReasonPlanFailed, err)
	}
	text, counted := printed.rendering()
	counts, countedOK := printedCounts(text)
	var planJSON []byte
	// Rendered only when what the engine printed does not say enough: a
	// plan printed too long to keep, or one big enough that its state
	// might not fit the state Secret (checkStateSize needs the JSON).
	if !counted || !countedOK || len(planBin) > magosv1.MaxStateSecretBytes/2 {
		err = timed(&r.result.Steps.Render, func() (err error) { planJSON, err = eng.PlanJSON(ctx, planFile); return err })
		if notRunnable := r.engineNotRunnable(err); notRunnable != nil {
			return notRunnable
		}
		if err != nil {
			return report.Failed(magosv1.ReasonPlanFailed, fmt.Errorf("rendering the plan as JSON: %s", engine.Summary(err)))
		}
		if counts, err = plansummary.Count(planJSON); err != nil {
			return report.Failed(magosv1.ReasonPlanFailed, err)
		}
	}
	if err := r.storePlan(ctx, planJSON, planBin, r.planText(ctx, eng, planFile, printed), counts, hasChanges); err != nil {
		return err
	}
	if !hasChanges {
		return nil
	}
	if planJSON != nil {
		if err := checkStateSize(planJSON); err != nil {
			return err
		}
	}
	return r.applyPlanFile(ctx, eng, configDir, planFile, r.cfg.PlanID)
}
