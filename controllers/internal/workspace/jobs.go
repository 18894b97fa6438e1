package workspace

import (
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/approvalrules"
	"github.com/magos-dev/magos/controllers/internal/configtree"
	"github.com/magos-dev/magos/controllers/internal/rerror"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// settings are a Workspace's effective settings: what its runs' Jobs are
// built from (runjob.Settings), and how it is planned, approved and
// retried.
type settings struct {
	runjob.Settings
	// Interval is the drift interval; AskedInterval the shorter one the
	// Workspace or its Project asked for, when --min-interval raised it.
	Interval, AskedInterval time.Duration
	Approval                magosv1.ApprovalMode
	// ApprovalRules are the compiled approval rules (the Workspace's, else
	// its Project's); FloorRules the Project's where the Workspace has
	// rules of its own: a plan needs what both ask.
	ApprovalRules, FloorRules *approvalrules.Rules
	// ApprovalMaxAge is how long an approval counts (0: for ever).
	ApprovalMaxAge time.Duration
	// AskedTimeout is the longer timeout the Workspace or its Project
	// asked for, when --max-run-timeout cut it.
	AskedTimeout time.Duration
	// DestroyGate is how a deletion destroys (Enforce unless set).
	DestroyGate magosv1.DestroyGate
	// Retry is how failed runs are retried.
	Retry decide.RetryPolicy
	// RunnerImageSet says the Workspace or its Project chose the runner image.
	RunnerImageSet bool
	// SpecEngineImage is the engine image (template) the Workspace or its
	// Project set for Engine.
	SpecEngineImage string
	// Content is what the Workspace declares about what it reads: the
	// Project's trigger paths and its own, and whether revisions that
	// change nothing it reads are carried.
	Content configtree.Options
}

// effectiveSettings layers the Workspace's own settings over its Project's
// defaults over the controller's, and resolves the engine image (an error
// stalls the Workspace).
func (r *Reconciler) effectiveSettings(ws *magosv1.Workspace, in inputs) (settings, error) {
	s := settings{Settings: runjob.Settings{Engine: magosv1.EngineOpenTofu, Version: r.Options.DefaultEngineVersion, Env: in.Env, Sensitive: in.Sensitive},
		Approval: magosv1.ApprovalAuto, DestroyGate: magosv1.DestroyGateEnforce, Retry: decide.RetryPolicy{Interval: r.Options.RetryInterval}}
	var layers []*magosv1.ProjectDefaults
	if in.Project != nil && in.Project.Status.Defaults != nil {
		layers = append(layers, in.Project.Status.Defaults)
	}
	layers = append(layers, &magosv1.ProjectDefaults{Terraform: ws.Spec.Terraform, Interval: ws.Spec.Interval, Approval: ws.Spec.Approval,
		ApprovalMaxAge: ws.Spec.ApprovalMaxAge, Destroy: ws.Spec.Destroy, Retry: ws.Spec.Retry,
		TriggerPaths: ws.Spec.TriggerPaths, ContentSkip: ws.Spec.ContentSkip})
	engineImages := map[magosv1.Engine]string{}
	for _, l := range layers {
		if t := l.Terraform; t != nil {
			if t.Engine != "" {
				s.Engine = t.Engine
			}
			if t.Version != "" {
				s.Version = strings.TrimPrefix(t.Version, "v")
			}
			if t.Image != "" {
				engineImages[t.Engine] = t.Image
			}
		}
		if l.Interval != nil {
			s.Interval = l.Interval.Duration
		}
		if l.Approval != "" {
			s.Approval = l.Approval
		}
		if l.Destroy != nil && l.Destroy.Gate != "" {
			s.DestroyGate = l.Destroy.Gate
		}
		if l.ApprovalMaxAge != nil {
			s.ApprovalMaxAge = l.ApprovalMaxAge.Duration
		}
		s.Retry = s.Retry.With(l.Retry)
		s.Content.TriggerPaths = append(s.Content.TriggerPaths, l.TriggerPaths...)
		if l.ContentSkip != "" {
			s.Content.Disabled = l.ContentSkip == magosv1.ContentSkipDisabled
		}
	}
	if err := approvalSettings(&s, ws, in.Project); err != nil {
		return s, err
	}
	var err error
	if m := r.Options.MinInterval; s.Interval > 0 && s.Interval < m {
		s.Interval, s.AskedInterval = m, s.Interval
	}
	s.Runner = in.Runner
	s.RunnerImageSet = s.Runner.Image != ""
	var timeout time.Duration
	if s.Runner.Timeout != nil {
		timeout = s.Runner.Timeout.Duration
	}
	s.Timeout, s.AskedTimeout = r.Options.RunDeadline(timeout)
	if s.Runner.Image == "" {
		s.Runner.Image = r.Options.RunnerImage
	}
	var runnerSensitive []string
	s.RunnerEnv, runnerSensitive = runjob.RunnerEnv(s.Runner.Env)
	if err := runjob.CheckRunnerConfig(&s.Runner, s.RunnerEnv, s.Env, r.Options.VersionsDir); err != nil {
		return s, err
	}
	s.Sensitive = append(slices.Clone(s.Sensitive), runnerSensitive...)
	s.SpecEngineImage = engineImages[s.Engine]
	s.EngineImage, err = r.resolveEngineImage(s)
	return s, err
}

// buildJob renders the Job of run rn from the Workspace's settings and the
// controller's options.
func (r *Reconciler) buildJob(ws *magosv1.Workspace, rn runjob.Run, s settings) *batchv1.Job {
	return runjob.Job(ws, rn, s.Settings, r.Options.JobConfig())
}

// resolveEngineImage decides how the runner Pod gets the engine. The image
// comes from, in order: the Workspace's spec.terraform.image, its Project's
// defaults.terraform.image (both only for the engine they name), the
// controller's --engine-image template for the engine. With none of them, a
// runner image set on the Workspace or Project is taken to hold the engine
// (no init container, empty result); otherwise the Workspace stalls with
// EngineImageNotConfigured.
func (r *Reconciler) resolveEngineImage(s settings) (string, error) {
	image := s.SpecEngineImage
	if image == "" && s.RunnerImageSet {
		return "", nil
	}
	if image == "" {
		image = r.Options.EngineImages[s.Engine]
	}
	if image == "" {
		return "", rerror.Stall(magosv1.ReasonEngineImageNotConfigured, fmt.Errorf(
			"no engine image for %s %s: looked for spec.terraform.image, the Project's defaults.terraform.image (engine %s) and the controller's --engine-image=%s=<image>; "+
				"set one of them, or set runner.image to an image that holds the engine in %s/%s/%s",
			s.Engine, s.Version, s.Engine, s.Engine, r.Options.VersionsDir, s.Engine, s.Version))
	}
	return strings.ReplaceAll(image, magosv1.EngineImageVersionPlaceholder, s.Version), nil
}

// approvalSettings sets how the Workspace's plans are approved: its
// approval mode, approval lifetime and rules, with its Project's as a floor
// it cannot lower (decide.EffectiveApproval, EffectiveApprovalMaxAge): a
// Workspace with rules of its own is reviewed under the Project's too. A
// rule that does not compile stalls.
func approvalSettings(s *settings, ws *magosv1.Workspace, project *magosv1.Project) error {
	var defaults *magosv1.ProjectDefaults
	if project != nil {
		defaults = project.Status.Defaults
	}
	var own, floor time.Duration
	if ws.Spec.ApprovalMaxAge != nil {
		own = ws.Spec.ApprovalMaxAge.Duration
	}
	if defaults != nil && defaults.ApprovalMaxAge != nil {
		floor = defaults.ApprovalMaxAge.Duration
	}
	s.Approval = decide.EffectiveApproval(ws.Spec.Approval, defaults)
	s.ApprovalMaxAge = decide.EffectiveApprovalMaxAge(own, floor)
	const projectField = "the Project's defaults.approvalRules"
	var projectRules []magosv1.ApprovalRule
	if defaults != nil {
		projectRules = defaults.ApprovalRules
	}
	rules, field := ws.Spec.ApprovalRules, "spec.approvalRules"
	if len(rules) == 0 {
		rules, field = projectRules, projectField
	} else if len(projectRules) > 0 {
		var err error
		if s.FloorRules, err = approvalrules.Compile(projectRules, projectField); err != nil {
			return rerror.Stall(magosv1.ReasonInvalidApprovalRule, err)
		}
	}
	var err error
	if s.ApprovalRules, err = approvalrules.Compile(rules, field); err != nil {
		return rerror.Stall(magosv1.ReasonInvalidApprovalRule, err)
	}
	return nil
}
