package v1alpha1

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// RunSpec is what the controller tells one run, typed: the controller
// turns it into the Job's environment with Env, the runner reads it back
// with ParseRunSpec. Both go through runSpecEnv, one table of the Env*
// names, so the two sides cannot disagree. It holds names and paths only:
// variable values reach the engine through its own environment and are
// never copied here.
// +kubebuilder:object:generate=false
type RunSpec struct {
	// Phase is RunPlan, RunApply, RunPlanApply or RunDestroy: the runner's argument, not
	// part of the environment.
	Phase          string
	Namespace      string
	Workspace      string
	WorkspaceUID   string
	RunID          string
	ArtifactURL    string
	ArtifactDigest string
	// ArtifactTokenFile is the bearer token for ArtifactURL (the artifact
	// proxy); empty when the URL is source-controller's own.
	ArtifactTokenFile string
	Revision          string
	// Path is the configuration directory inside the artifact; parsed, it
	// is cleaned and relative ("." for the root).
	Path          string
	Engine        string
	EngineVersion string
	VersionsDir   string
	PlanID        string
	PlanDigest    string
	// PlanBundleDigest is the sha256 of the stored plan stream the
	// controller recorded (apply runs).
	PlanBundleDigest string
	StateSecret      string
	LockLease        string
	// BackendConfig is the path of a user backend block; empty means the
	// runner serves the state itself from StateSecret and LockLease.
	BackendConfig string
	OutputsSecret string
	// OutputNames are the outputs to write; empty means all.
	OutputNames []string
	// SensitiveEnv names the environment variables whose values are
	// masked, comma-separated.
	SensitiveEnv string
	WorkDir      string
	// TerminationMessage is the file the RunResult is written to.
	TerminationMessage string
	Drift              bool
	// PlanMode is PlanModeDestroy for a destroy plan (plan runs) or the
	// apply of one (apply runs); empty for a normal plan.
	PlanMode string
	// PlanTargets and PlanReplace are a plan's -target and -replace
	// addresses (plan runs).
	PlanTargets, PlanReplace []string
	// ShutdownWait is how long the engine may take to stop once the run
	// is interrupted (DefaultShutdownWait unless set).
	ShutdownWait time.Duration
	// ErroredStateSecret receives state the engine could not write back
	// (apply and destroy runs); empty means there is nowhere to save it.
	ErroredStateSecret string
}

// runSpecVar is one environment variable of the run contract: how a
// RunSpec field is written to it and read from it ("" is unset).
// +kubebuilder:object:generate=false
type runSpecVar struct {
	name string
	get  func(*RunSpec) string
	set  func(*RunSpec, string) error
}

// runSpecString is the runSpecVar of a string field.
func runSpecString(name string, field func(*RunSpec) *string) runSpecVar {
	return runSpecVar{name: name,
		get: func(s *RunSpec) string { return *field(s) },
		set: func(s *RunSpec, v string) error { *field(s) = v; return nil }}
}

// runSpecList is the runSpecVar of a list field, its entries joined by sep (output
// names by commas; addresses, which may hold commas, one per line).
func runSpecList(name, sep string, field func(*RunSpec) *[]string) runSpecVar {
	return runSpecVar{name: name,
		get: func(s *RunSpec) string { return strings.Join(*field(s), sep) },
		set: func(s *RunSpec, v string) error { *field(s) = splitList(v, sep); return nil }}
}

// runSpecEnv is the run contract's environment, in the order Env writes it.
var runSpecEnv = []runSpecVar{
	runSpecString(EnvNamespace, func(s *RunSpec) *string { return &s.Namespace }),
	runSpecString(EnvWorkspace, func(s *RunSpec) *string { return &s.Workspace }),
	runSpecString(EnvWorkspaceUID, func(s *RunSpec) *string { return &s.WorkspaceUID }),
	runSpecString(EnvRunID, func(s *RunSpec) *string { return &s.RunID }),
	runSpecString(EnvArtifactURL, func(s *RunSpec) *string { return &s.ArtifactURL }),
	runSpecString(EnvArtifactDigest, func(s *RunSpec) *string { return &s.ArtifactDigest }),
	runSpecString(EnvArtifactTokenFile, func(s *RunSpec) *string { return &s.ArtifactTokenFile }),
	runSpecString(EnvRevision, func(s *RunSpec) *string { return &s.Revision }),
	runSpecString(EnvPath, func(s *RunSpec) *string { return &s.Path }),
	runSpecString(EnvEngine, func(s *RunSpec) *string { return &s.Engine }),
	runSpecString(EnvEngineVersion, func(s *RunSpec) *string { return &s.EngineVersion }),
	runSpecString(EnvVersionsDir, func(s *RunSpec) *string { return &s.VersionsDir }),
	runSpecString(EnvPlanID, func(s *RunSpec) *string { return &s.PlanID }),
	runSpecString(EnvPlanDigest, func(s *RunSpec) *string { return &s.PlanDigest }),
	runSpecString(EnvPlanBundleDigest, func(s *RunSpec) *string { return &s.PlanBundleDigest }),
	runSpecString(EnvStateSecret, func(s *RunSpec) *string { return &s.StateSecret }),
	runSpecString(EnvLockLease, func(s *RunSpec) *string { return &s.LockLease }),
	runSpecString(EnvBackendConfig, func(s *RunSpec) *string { return &s.BackendConfig }),
	runSpecString(EnvOutputsSecret, func(s *RunSpec) *string { return &s.OutputsSecret }),
	runSpecList(EnvOutputNames, ",", func(s *RunSpec) *[]string { return &s.OutputNames }),
	runSpecString(EnvSensitiveEnv, func(s *RunSpec) *string { return &s.SensitiveEnv }),
	runSpecString(EnvWorkDir, func(s *RunSpec) *string { return &s.WorkDir }),
	runSpecString(EnvTerminationMessage, func(s *RunSpec) *string { return &s.TerminationMessage }),
	{name: EnvDriftCheck,
		get: func(s *RunSpec) string { return map[bool]string{true: "true"}[s.Drift] },
		set: func(s *RunSpec, v string) error { s.Drift = v == "true"; return nil }},
	runSpecString(EnvPlanMode, func(s *RunSpec) *string { return &s.PlanMode }),
	runSpecList(EnvPlanTargets, "\n", func(s *RunSpec) *[]string { return &s.PlanTargets }),
	runSpecList(EnvPlanReplace, "\n", func(s *RunSpec) *[]string { return &s.PlanReplace }),
	{name: EnvShutdownWait,
		get: func(s *RunSpec) string {
			if s.ShutdownWait == 0 {
				return ""
			}
			return s.ShutdownWait.String()
		},
		set: func(s *RunSpec, v string) error {
			d, err := time.ParseDuration(v)
			switch {
			case err != nil:
				return err
			case d <= 0:
				return fmt.Errorf("must be positive, got %q", v)
			}
			s.ShutdownWait = d
			return nil
		}},
	runSpecString(EnvErroredState, func(s *RunSpec) *string { return &s.ErroredStateSecret }),
}

// Env is the Job environment that carries s: every variable of the
// contract, in its order, unset ones empty, so that no earlier entry of
// the same name stands in for one (the kubelet keeps the last). Phase is
// the runner's argument and not among them.
func (s *RunSpec) Env() []corev1.EnvVar {
	env := make([]corev1.EnvVar, 0, len(runSpecEnv))
	for _, v := range runSpecEnv {
		env = append(env, corev1.EnvVar{Name: v.name, Value: v.get(s)})
	}
	return env
}

// ParseRunSpec reads the RunSpec of phase from getenv, fills the defaults
// (termination message path, shutdown wait, state Secret and Lease names)
// and validates it, reporting every problem at once.
func ParseRunSpec(phase string, getenv func(string) string) (*RunSpec, error) {
	s := &RunSpec{Phase: phase}
	var errs []error
	for _, v := range runSpecEnv {
		value := strings.TrimSpace(getenv(v.name))
		if value == "" {
			continue
		}
		if err := v.set(s, value); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", v.name, err))
		}
	}
	if s.ShutdownWait == 0 {
		s.ShutdownWait = DefaultShutdownWait
	}
	if s.TerminationMessage == "" {
		s.TerminationMessage = DefaultTerminationMessagePath
	}
	if s.Workspace != "" {
		if s.StateSecret == "" {
			s.StateSecret = StateSecretName(s.Workspace)
		}
		if s.LockLease == "" {
			s.LockLease = LockLeaseName(s.Workspace)
		}
	}
	return s, errors.Join(append(errs, s.validate())...)
}

// engineBinaries are the engines and the binary each one is run as.
var engineBinaries = map[string]string{
	"opentofu":  "tofu",
	"terraform": "terraform",
}

// Destroying says whether the run plans or applies a destroy.
func (s *RunSpec) Destroying() bool { return s.PlanMode == string(PlanModeDestroy) }

// EngineBinary is the file name of the engine's executable ("" for an
// unknown engine).
func (s *RunSpec) EngineBinary() string { return engineBinaries[s.Engine] }

// validate checks s and cleans its Path.
func (s *RunSpec) validate() error {
	var errs []error
	require := func(name, value string) {
		if value == "" {
			errs = append(errs, fmt.Errorf("%s is not set", name))
		}
	}
	switch s.Phase {
	case RunPlan, RunApply, RunDestroy, RunPlanApply:
	default:
		errs = append(errs, fmt.Errorf("unknown phase %q", s.Phase))
	}
	require(EnvNamespace, s.Namespace)
	require(EnvWorkspace, s.Workspace)
	require(EnvArtifactURL, s.ArtifactURL)
	require(EnvArtifactDigest, s.ArtifactDigest)
	require(EnvEngine, s.Engine)
	require(EnvEngineVersion, s.EngineVersion)
	require(EnvVersionsDir, s.VersionsDir)
	require(EnvWorkDir, s.WorkDir)
	if RunPlans(s.Phase) || s.Phase == RunApply {
		require(EnvWorkspaceUID, s.WorkspaceUID)
		require(EnvPlanID, s.PlanID)
	}
	if s.Phase == RunApply {
		require(EnvPlanDigest, s.PlanDigest)
		if s.PlanDigest != "" && !isSHA256Digest(s.PlanDigest) {
			errs = append(errs, fmt.Errorf("%s must be sha256:<64 hex digits>", EnvPlanDigest))
		}
	}
	switch {
	case s.PlanMode != "" && !s.Destroying():
		errs = append(errs, fmt.Errorf("%s %q is not %s", EnvPlanMode, s.PlanMode, PlanModeDestroy))
	case s.PlanMode != "" && (s.Phase == RunDestroy || s.Phase == RunPlanApply):
		errs = append(errs, fmt.Errorf("%s is for plan and apply runs, not %s", EnvPlanMode, s.Phase))
	}
	if s.Phase == RunPlanApply && s.PlanDigest != "" {
		errs = append(errs, fmt.Errorf("%s is for apply runs, not %s: a %s run applies the plan it makes", EnvPlanDigest, s.Phase, s.Phase))
	}
	if (len(s.PlanTargets) > 0 || len(s.PlanReplace) > 0) && s.Phase != RunPlan {
		errs = append(errs, fmt.Errorf("%s and %s are for plan runs, not %s", EnvPlanTargets, EnvPlanReplace, s.Phase))
	}
	if s.ArtifactDigest != "" && !isDigest(s.ArtifactDigest) {
		errs = append(errs, fmt.Errorf("%s must be <algorithm>:<hex digits>", EnvArtifactDigest))
	}
	if s.Engine != "" && s.EngineBinary() == "" {
		errs = append(errs, fmt.Errorf("%s %q is not one of opentofu, terraform", EnvEngine, s.Engine))
	}
	if s.EngineVersion != "" && !isPathElement(s.EngineVersion) {
		errs = append(errs, fmt.Errorf("%s %q is not a version", EnvEngineVersion, s.EngineVersion))
	}
	if s.Workspace != "" {
		// The workspace name is a label value on plan Secrets and a part of
		// the plan Secret, state Secret and Lease names.
		for _, msg := range validation.IsValidLabelValue(s.Workspace) {
			errs = append(errs, fmt.Errorf("%s %q is not usable as a label value: %s", EnvWorkspace, s.Workspace, msg))
		}
	}
	if s.PlanID != "" {
		for _, msg := range validation.IsValidLabelValue(s.PlanID) {
			errs = append(errs, fmt.Errorf("%s %q is not usable as a label value: %s", EnvPlanID, s.PlanID, msg))
		}
	}
	for _, n := range []struct{ env, name string }{
		{EnvStateSecret, s.StateSecret},
		{EnvLockLease, s.LockLease},
		{EnvOutputsSecret, s.OutputsSecret},
		{EnvErroredState, s.ErroredStateSecret},
	} {
		if n.name == "" {
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(n.name) {
			errs = append(errs, fmt.Errorf("%s %q is not an object name: %s", n.env, n.name, msg))
		}
	}
	p, err := cleanRelPath(s.Path)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", EnvPath, err))
	}
	s.Path = p
	return errors.Join(errs...)
}

// cleanRelPath cleans a slash-separated path that must stay inside its root.
func cleanRelPath(p string) (string, error) {
	if strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("path %q must be relative", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", fmt.Errorf("path %q must not contain '..'", p)
		}
	}
	if strings.ContainsAny(p, "\\\x00") {
		return "", fmt.Errorf("path %q contains a backslash or NUL", p)
	}
	return path.Clean("./" + p), nil
}

func isPathElement(s string) bool {
	return s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00")
}

// isDigest reports whether d has the shape of an artifact digest,
// "<algorithm>:<hex>" with at least 64 lower-case hex digits; the runner
// checks the algorithm is one it supports (artifactdigest).
func isDigest(d string) bool {
	algo, value, ok := strings.Cut(d, ":")
	if !ok || algo == "" || len(value) < 64 || len(value)%2 != 0 {
		return false
	}
	for _, c := range algo {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	for _, c := range value {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// isSHA256Digest reports whether d is "sha256:" followed by 64 hex digits.
func isSHA256Digest(d string) bool {
	return strings.HasPrefix(d, "sha256:") && len(d) == len("sha256:")+64 && isDigest(d)
}

// splitList splits sep-separated entries, trimmed, dropping empty ones.
func splitList(s, sep string) []string {
	var out []string
	for _, v := range strings.Split(s, sep) {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
