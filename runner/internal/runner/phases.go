package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/apis/plansummary"
	"github.com/magos-dev/magos/runner/internal/engine"
	"github.com/magos-dev/magos/runner/internal/outputs"
	"github.com/magos-dev/magos/runner/internal/report"
)

// planFile is where the binary plan is written, outside the configuration.
func (r *runner) planFile() (string, error) {
	dir := filepath.Join(r.cfg.WorkDir, "plan")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	return filepath.Join(dir, magosv1.PlanBinaryFile), nil
}

// plan plans (a destroy in PlanModeDestroy), renders the plan JSON and the
// readable text, counts its changes and stores them. A destroy plan is
// stored like any other: the gate, the approver and the apply treat it the
// same. The text is for people only: the plan digest covers the JSON, and
// the apply never reads the text.
func (r *runner) plan(ctx context.Context, eng *engine.Engine) error {
	planFile, err := r.planFile()
	if err != nil {
		return report.Failed(magosv1.ReasonPlanFailed, err)
	}
	r.log.Info("Planning", "planID", r.cfg.PlanID, "mode", r.cfg.PlanMode, "targets", r.cfg.PlanTargets, "replace", r.cfg.PlanReplace)
	var hasChanges bool
	printed := &printedOutput{}
	err = timed(&r.result.Steps.Engine, func() (err error) {
		hasChanges, err = eng.Plan(ctx, planFile, engine.PlanOptions{Destroy: r.cfg.Destroying(), Targets: r.cfg.PlanTargets, Replace: r.cfg.PlanReplace, Printed: printed})
		return err
	})
	if err != nil {
		return r.engineError(magosv1.ReasonPlanFailed, "plan", err)
	}
	var planJSON []byte
	err = timed(&r.result.Steps.Render, func() (err error) { planJSON, err = eng.PlanJSON(ctx, planFile); return err })
	if notRunnable := r.engineNotRunnable(err); notRunnable != nil {
		return notRunnable
	}
	if err != nil {
		return report.Failed(magosv1.ReasonPlanFailed, fmt.Errorf("rendering the plan as JSON: %s", engine.Summary(err)))
	}
	counts, err := plansummary.Count(planJSON)
	if err != nil {
		return report.Failed(magosv1.ReasonPlanFailed, err)
	}
	planBin, err := os.ReadFile(planFile)
	if err != nil {
		return report.Failed(magosv1.ReasonPlanFailed, err)
	}
	return r.storePlan(ctx, planJSON, planBin, r.planText(ctx, eng, planFile, printed), counts, hasChanges)
}

// storePlan stores the plan under the run's plan ID and reports it: its
// digest (of planJSON; a fast run's plan is stored without JSON), counts
// and where it is stored.
func (r *runner) storePlan(ctx context.Context, planJSON, planBin, planText []byte, counts plansummary.Counts, hasChanges bool) error {
	var meta planstore.Meta
	err := timed(&r.result.Steps.Storage, func() (err error) {
		meta, err = planstore.Store(ctx, r.kube.CoreV1().Secrets(r.cfg.Namespace), planstore.Input{
			Workspace: r.cfg.Workspace,
			Owner:     r.owner(),
			ID:        r.cfg.PlanID,
			JSON:      planJSON,
			Binary:    planBin,
			Text:      planText,
		})
		return err
	})
	var notReserved *planstore.NotReservedError
	if errors.As(err, &notReserved) {
		// The controller reserves that many and plans again.
		r.result.PlanChunks = notReserved.Chunks
		return report.Stale(magosv1.ReasonPlanStorageExhausted, err)
	}
	if err != nil {
		return report.Failed(magosv1.ReasonPlanStoreFailed, err)
	}
	r.log.Info("Stored the plan", "planID", meta.ID, "digest", meta.Digest, "chunks", meta.Chunks, "bytes", meta.Size, "textBytes", len(planText),
		"add", counts.Add, "change", counts.Change, "destroy", counts.Destroy, "hasChanges", hasChanges)
	res := r.result
	res.PlanDigest = meta.Digest
	res.Add, res.Change, res.Destroy = counts.Add, counts.Change, counts.Destroy
	res.HasChanges = hasChanges
	res.Storage = magosv1.PlanStoragePrefix(r.cfg.Workspace)
	if r.cfg.Drift && hasChanges {
		res.Message = fmt.Sprintf("drift detected: %d to add, %d to change, %d to destroy", counts.Add, counts.Change, counts.Destroy)
	}
	return nil
}

// loadApprovedPlan loads the stored plan and checks that it is the one the
// controller approved. Any doubt means the plan must be made again.
func (r *runner) loadApprovedPlan(ctx context.Context) (*planstore.Plan, error) {
	r.log.Info("Loading the stored plan", "planID", r.cfg.PlanID, "digest", r.cfg.PlanDigest)
	var p *planstore.Plan
	err := timed(&r.result.Steps.Storage, func() (err error) {
		p, err = planstore.Load(ctx, r.kube.CoreV1().Secrets(r.cfg.Namespace), r.cfg.Workspace)
		return err
	})
	switch {
	case errors.Is(err, planstore.ErrNotFound):
		return nil, report.Stale(magosv1.ReasonPlanNotFound, err)
	case errors.Is(err, planstore.ErrCorrupt):
		return nil, report.Stale(magosv1.ReasonPlanCorrupt, err)
	case err != nil:
		return nil, report.Failed(magosv1.ReasonPlanStoreFailed, err)
	}
	if p.ID != r.cfg.PlanID {
		return nil, report.Stale(magosv1.ReasonPlanDigestMismatch,
			fmt.Errorf("the stored plan is %s, not the approved plan %s", p.ID, r.cfg.PlanID))
	}
	if p.Digest != r.cfg.PlanDigest {
		return nil, report.Stale(magosv1.ReasonPlanDigestMismatch,
			fmt.Errorf("the stored plan %s has digest %s, not the approved %s", p.ID, p.Digest, r.cfg.PlanDigest))
	}
	// Load checked the stream against chunk 0's sha256, which whoever wrote
	// the Secrets computed; the controller's reading when it recorded the
	// plan is the one to trust.
	if r.cfg.PlanBundleDigest == "" {
		return nil, report.Stale(magosv1.ReasonPlanDigestMismatch,
			fmt.Errorf("plan %s was recorded without the digest of its stored bundle; it is made again", p.ID))
	}
	// The same plan ID with other bytes is never a new plan: the plan
	// Secrets were rewritten after the plan was recorded.
	if p.SHA256 != r.cfg.PlanBundleDigest {
		return nil, report.Failed(magosv1.ReasonPlanBinaryMismatch,
			fmt.Errorf("the stored plan %s has bundle digest %s, not the %s recorded when it was made: it was rewritten since and is not the plan the policy gate and the approver saw; nothing was applied",
				p.ID, p.SHA256, r.cfg.PlanBundleDigest))
	}
	r.result.PlanDigest = p.Digest
	return p, nil
}

// apply applies the stored plan and writes the outputs; a destroy leaves
// none to write.
func (r *runner) apply(ctx context.Context, eng *engine.Engine, configDir string, p *planstore.Plan) error {
	planFile, err := r.planFile()
	if err != nil {
		return report.Failed(magosv1.ReasonApplyFailed, err)
	}
	// The engine renders and applies the plan file rebuilt from the entries
	// checkPlanFile checks, not the stored bytes.
	saved, err := r.savedPlan(p)
	if err != nil {
		return err
	}
	if err := os.WriteFile(planFile, saved.Binary, 0o600); err != nil {
		return report.Failed(magosv1.ReasonApplyFailed, err)
	}
	if err := r.checkBinaryPlan(ctx, eng, planFile, p.ID); err != nil {
		return err
	}
	if err := r.checkPlanFile(configDir, p); err != nil {
		return err
	}
	if err := checkStateSize(p.JSON); err != nil {
		return err
	}
	return r.applyPlanFile(ctx, eng, configDir, planFile, p.ID)
}

// applyPlanFile applies planFile (plan planID), adding the engine's time
// to any it spent before in this run. On failure it saves the state the
// engine left; after an apply it writes the outputs (not after a destroy).
func (r *runner) applyPlanFile(ctx context.Context, eng *engine.Engine, configDir, planFile, planID string) error {
	r.log.Info("Applying", "planID", planID)
	before := r.result.Steps.Engine
	err := timed(&r.result.Steps.Engine, func() error { return eng.Apply(ctx, planFile) })
	r.result.Steps.Engine += before
	if err != nil {
		if serr := r.saveErroredState(ctx, configDir, "apply", err); serr != nil {
			return serr
		}
		if engine.IsStalePlan(err) {
			return report.Stale(magosv1.ReasonPlanStale, fmt.Errorf("apply: %s; the state changed after plan %s was made", engine.Summary(err), planID))
		}
		return r.engineError(magosv1.ReasonApplyFailed, "apply", err)
	}
	if r.cfg.Destroying() {
		return nil
	}
	return r.writeOutputs(ctx, eng)
}

// checkBinaryPlan renders the binary plan that is about to be applied as
// JSON, as the plan run did, and checks that it has the approved digest.
//
// The approved digest is that of the plan JSON: what the policy gate
// evaluated and the approver saw. The binary plan, which is what the
// engine applies, is stored next to it in Secrets that anything able to
// write Secrets in the namespace can rewrite (the Workspace's own config
// code at plan time included), and chunk 0's checksums are computed by
// that same writer. A digest over the stored bytes would prove only that
// nobody changed them after the writer; rendering the binary again proves
// that it is the plan the JSON describes, whoever wrote it. `show -json`
// of one plan file with one engine version is byte-for-byte the same.
func (r *runner) checkBinaryPlan(ctx context.Context, eng *engine.Engine, planFile, planID string) error {
	var rendered []byte
	err := timed(&r.result.Steps.Render, func() (err error) { rendered, err = eng.PlanJSON(ctx, planFile); return err })
	if notRunnable := r.engineNotRunnable(err); notRunnable != nil {
		return notRunnable
	}
	if err != nil {
		return report.Failed(magosv1.ReasonPlanBinaryMismatch,
			fmt.Errorf("the stored binary plan %s cannot be read by the engine (%s); nothing was applied", planID, engine.Summary(err)))
	}
	if got := planstore.Digest(rendered); got != r.cfg.PlanDigest {
		return report.Failed(magosv1.ReasonPlanBinaryMismatch,
			fmt.Errorf("the stored binary plan %s renders to digest %s, not the approved %s: it is not the plan the policy gate and the approver saw; nothing was applied",
				planID, got, r.cfg.PlanDigest))
	}
	return nil
}

// writeOutputs writes the selected outputs to the outputs Secret and
// reports their names.
func (r *runner) writeOutputs(ctx context.Context, eng *engine.Engine) error {
	if r.cfg.OutputsSecret == "" {
		return nil
	}
	all, err := r.readOutputs(ctx, eng)
	if err != nil {
		return err
	}
	data, written, missing, err := outputs.Select(all, r.cfg.OutputNames)
	if err != nil {
		return report.Failed(magosv1.ReasonOutputsFailed, fmt.Errorf("applied, but %w", err))
	}
	target := outputs.Target{Name: r.cfg.OutputsSecret, Workspace: r.cfg.Workspace, Owner: r.owner()}
	changed, err := outputs.Write(ctx, r.kube.CoreV1().Secrets(r.cfg.Namespace), target, data)
	if err != nil {
		return report.Failed(magosv1.ReasonOutputsFailed, fmt.Errorf("applied, but %w", err))
	}
	r.log.Info("Wrote outputs", "secret", r.cfg.OutputsSecret, "outputs", written, "changed", changed)
	r.result.Outputs, r.result.ChangedOutputs = written, changed
	if len(missing) > 0 {
		r.result.Message = "outputs not in the configuration: " + strings.Join(missing, ", ")
	}
	return nil
}

// readOutputs returns the root module's outputs after an apply: from the
// state the engine last wrote to the runner's own state server, else from
// the engine (which then needs the configuration initialised).
func (r *runner) readOutputs(ctx context.Context, eng *engine.Engine) (map[string]outputs.Output, error) {
	if r.backend != nil {
		if state, ok := r.backend.State(); ok {
			all, err := outputs.FromState(state)
			if err == nil {
				return all, nil
			}
			r.log.Info("Asking the engine for the outputs: the state's cannot be read", "error", err)
		}
	}
	if err := r.init(ctx, eng); err != nil {
		return nil, err
	}
	metas, err := eng.Outputs(ctx)
	if err != nil {
		return nil, report.Failed(magosv1.ReasonOutputsFailed, fmt.Errorf("applied, but reading the outputs failed: %s", engine.Summary(err)))
	}
	all := make(map[string]outputs.Output, len(metas))
	for name, m := range metas {
		all[name] = outputs.Output{Sensitive: m.Sensitive, Value: m.Value}
	}
	return all, nil
}

// destroy destroys everything in the state without a plan: the Workspace
// skips the destroy gate.
func (r *runner) destroy(ctx context.Context, eng *engine.Engine, configDir string) error {
	r.log.Info("Destroying")
	if err := timed(&r.result.Steps.Engine, func() error { return eng.Destroy(ctx) }); err != nil {
		if serr := r.saveErroredState(ctx, configDir, "destroy", err); serr != nil {
			return serr
		}
		return r.engineError(magosv1.ReasonDestroyFailed, "destroy", err)
	}
	return nil
}
