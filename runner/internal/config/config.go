package config

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Engines and the binary each one is run as.
var engineBinaries = map[string]string{
	"opentofu":  "tofu",
	"terraform": "terraform",
}

// Config is one run's parameters. It holds names and paths only: variable
// values reach the engine through its environment and are never copied here.
type Config struct {
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
	// Path is the configuration directory inside the artifact, cleaned and
	// relative ("." for the root).
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
	// SensitiveEnv names the environment variables whose values are masked.
	SensitiveEnv string
	WorkDir      string
	// TerminationMessage is the file the RunResult is written to.
	TerminationMessage string
	Drift              bool
	// PlanMode is magosv1.PlanModeDestroy for a destroy plan (plan runs) or
	// the apply of one (apply runs); empty for a normal plan.
	PlanMode string
	// PlanTargets and PlanReplace are a plan's -target and -replace
	// addresses (plan runs).
	PlanTargets, PlanReplace []string
	// ShutdownWait is how long the engine may take to stop once the run
	// is interrupted (magosv1.DefaultShutdownWait unless set).
	ShutdownWait time.Duration
	// ErroredStateSecret receives state the engine could not write back
	// (apply and destroy runs); empty means there is nowhere to save it.
	ErroredStateSecret string
}

// Destroying says whether the run plans or applies a destroy.
func (c *Config) Destroying() bool { return c.PlanMode == string(magosv1.PlanModeDestroy) }

// EngineBinary is the file name of the engine's executable.
func (c *Config) EngineBinary() string { return engineBinaries[c.Engine] }

// FromEnv reads the configuration of phase from getenv. It reports every
// problem it finds at once.
func FromEnv(phase string, getenv func(string) string) (*Config, error) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	c := &Config{
		Phase:              phase,
		Namespace:          get(magosv1.EnvNamespace),
		Workspace:          get(magosv1.EnvWorkspace),
		WorkspaceUID:       get(magosv1.EnvWorkspaceUID),
		RunID:              get(magosv1.EnvRunID),
		ArtifactURL:        get(magosv1.EnvArtifactURL),
		ArtifactDigest:     get(magosv1.EnvArtifactDigest),
		ArtifactTokenFile:  get(magosv1.EnvArtifactTokenFile),
		Revision:           get(magosv1.EnvRevision),
		Path:               get(magosv1.EnvPath),
		Engine:             get(magosv1.EnvEngine),
		EngineVersion:      get(magosv1.EnvEngineVersion),
		VersionsDir:        get(magosv1.EnvVersionsDir),
		PlanID:             get(magosv1.EnvPlanID),
		PlanDigest:         get(magosv1.EnvPlanDigest),
		PlanBundleDigest:   get(magosv1.EnvPlanBundleDigest),
		StateSecret:        get(magosv1.EnvStateSecret),
		LockLease:          get(magosv1.EnvLockLease),
		BackendConfig:      get(magosv1.EnvBackendConfig),
		OutputsSecret:      get(magosv1.EnvOutputsSecret),
		OutputNames:        split(get(magosv1.EnvOutputNames), ","),
		SensitiveEnv:       get(magosv1.EnvSensitiveEnv),
		WorkDir:            get(magosv1.EnvWorkDir),
		TerminationMessage: get(magosv1.EnvTerminationMessage),
		Drift:              get(magosv1.EnvDriftCheck) == "true",
		PlanMode:           get(magosv1.EnvPlanMode),
		PlanTargets:        split(get(magosv1.EnvPlanTargets), "\n"),
		PlanReplace:        split(get(magosv1.EnvPlanReplace), "\n"),
		ShutdownWait:       magosv1.DefaultShutdownWait,
		ErroredStateSecret: get(magosv1.EnvErroredState),
	}
	var waitErr error
	if v := get(magosv1.EnvShutdownWait); v != "" {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			waitErr = fmt.Errorf("%s: %w", magosv1.EnvShutdownWait, err)
		case d <= 0:
			waitErr = fmt.Errorf("%s must be positive, got %q", magosv1.EnvShutdownWait, v)
		default:
			c.ShutdownWait = d
		}
	}
	if c.TerminationMessage == "" {
		c.TerminationMessage = magosv1.DefaultTerminationMessagePath
	}
	if c.Workspace != "" {
		if c.StateSecret == "" {
			c.StateSecret = magosv1.StateSecretName(c.Workspace)
		}
		if c.LockLease == "" {
			c.LockLease = magosv1.LockLeaseName(c.Workspace)
		}
	}
	return c, errors.Join(waitErr, c.validate())
}

func (c *Config) validate() error {
	var errs []error
	require := func(name, value string) {
		if value == "" {
			errs = append(errs, fmt.Errorf("%s is not set", name))
		}
	}
	switch c.Phase {
	case magosv1.RunPlan, magosv1.RunApply, magosv1.RunDestroy:
	default:
		errs = append(errs, fmt.Errorf("unknown phase %q", c.Phase))
	}
	require(magosv1.EnvNamespace, c.Namespace)
	require(magosv1.EnvWorkspace, c.Workspace)
	require(magosv1.EnvArtifactURL, c.ArtifactURL)
	require(magosv1.EnvArtifactDigest, c.ArtifactDigest)
	require(magosv1.EnvEngine, c.Engine)
	require(magosv1.EnvEngineVersion, c.EngineVersion)
	require(magosv1.EnvVersionsDir, c.VersionsDir)
	require(magosv1.EnvWorkDir, c.WorkDir)
	if c.Phase == magosv1.RunPlan || c.Phase == magosv1.RunApply {
		require(magosv1.EnvWorkspaceUID, c.WorkspaceUID)
		require(magosv1.EnvPlanID, c.PlanID)
	}
	if c.Phase == magosv1.RunApply {
		require(magosv1.EnvPlanDigest, c.PlanDigest)
		if c.PlanDigest != "" && !isSHA256Digest(c.PlanDigest) {
			errs = append(errs, fmt.Errorf("%s must be sha256:<64 hex digits>", magosv1.EnvPlanDigest))
		}
	}
	switch {
	case c.PlanMode != "" && !c.Destroying():
		errs = append(errs, fmt.Errorf("%s %q is not %s", magosv1.EnvPlanMode, c.PlanMode, magosv1.PlanModeDestroy))
	case c.PlanMode != "" && c.Phase == magosv1.RunDestroy:
		errs = append(errs, fmt.Errorf("%s is for plan and apply runs, not %s", magosv1.EnvPlanMode, c.Phase))
	}
	if (len(c.PlanTargets) > 0 || len(c.PlanReplace) > 0) && c.Phase != magosv1.RunPlan {
		errs = append(errs, fmt.Errorf("%s and %s are for plan runs, not %s", magosv1.EnvPlanTargets, magosv1.EnvPlanReplace, c.Phase))
	}
	if c.ArtifactDigest != "" && !isSHA256Digest(c.ArtifactDigest) {
		errs = append(errs, fmt.Errorf("%s must be sha256:<64 hex digits>", magosv1.EnvArtifactDigest))
	}
	if c.Engine != "" && c.EngineBinary() == "" {
		errs = append(errs, fmt.Errorf("%s %q is not one of opentofu, terraform", magosv1.EnvEngine, c.Engine))
	}
	if c.EngineVersion != "" && !isPathElement(c.EngineVersion) {
		errs = append(errs, fmt.Errorf("%s %q is not a version", magosv1.EnvEngineVersion, c.EngineVersion))
	}
	if c.Workspace != "" {
		// The workspace name is a label value on plan Secrets and a part of
		// the plan Secret, state Secret and Lease names.
		for _, msg := range validation.IsValidLabelValue(c.Workspace) {
			errs = append(errs, fmt.Errorf("%s %q is not usable as a label value: %s", magosv1.EnvWorkspace, c.Workspace, msg))
		}
	}
	if c.PlanID != "" {
		for _, msg := range validation.IsValidLabelValue(c.PlanID) {
			errs = append(errs, fmt.Errorf("%s %q is not usable as a label value: %s", magosv1.EnvPlanID, c.PlanID, msg))
		}
	}
	for _, n := range []struct{ env, name string }{
		{magosv1.EnvStateSecret, c.StateSecret},
		{magosv1.EnvLockLease, c.LockLease},
		{magosv1.EnvOutputsSecret, c.OutputsSecret},
		{magosv1.EnvErroredState, c.ErroredStateSecret},
	} {
		if n.name == "" {
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(n.name) {
			errs = append(errs, fmt.Errorf("%s %q is not an object name: %s", n.env, n.name, msg))
		}
	}
	p, err := cleanRelPath(c.Path)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", magosv1.EnvPath, err))
	}
	c.Path = p
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

// isSHA256Digest reports whether d is "sha256:" followed by 64 hex digits.
func isSHA256Digest(d string) bool {
	hex, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	for _, r := range hex {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// split splits a list of sep-separated entries, trimmed, dropping empty
// ones. Output names are comma-separated; addresses, which may hold
// commas, one per line.
func split(s, sep string) []string {
	var out []string
	for _, v := range strings.Split(s, sep) {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
