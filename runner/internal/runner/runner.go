package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/planstore"
	"github.com/magos-dev/magos/runner/internal/artifact"
	"github.com/magos-dev/magos/runner/internal/engine"
	"github.com/magos-dev/magos/runner/internal/kube"
	"github.com/magos-dev/magos/runner/internal/mask"
	"github.com/magos-dev/magos/runner/internal/planfile"
	"github.com/magos-dev/magos/runner/internal/report"
	"github.com/magos-dev/magos/runner/internal/statebackend"
)

// Options replace the runner's collaborators in tests; the zero value is
// what the binary uses.
type Options struct {
	// Kube is the Kubernetes client; nil means one from the default
	// loading rules (KUBECONFIG, else in-cluster).
	Kube kubernetes.Interface
	// Fetcher downloads the artifact; nil means artifact.DefaultFetcher.
	Fetcher *artifact.Fetcher
	// Version is the runner's build version, reported with the run
	// contract it speaks (magosv1.RunContractMajor) in every report.
	Version string
}

// runner is the state of one run.
type runner struct {
	cfg     *magosv1.RunSpec
	opts    Options
	log     *slog.Logger
	stdout  io.Writer
	stderr  io.Writer
	kube    kubernetes.Interface
	backend *statebackend.Server
	result  *magosv1.RunResult
	// hide masks values the run learns (backend credentials) from now on.
	hide func(values ...string)
	// mask masks a string with every value known so far, for what the run
	// stores rather than prints (the plan text).
	mask func(string) string
	// initialised says that init ran in the configuration directory.
	initialised bool
	// saved is what the stored plan file carries besides the plan (apply
	// runs; see savedPlan).
	saved *planfile.File
}

// Run runs phase with the configuration from getenv, writes the RunResult
// to the termination message file and returns the process exit code.
func Run(ctx context.Context, phase string, getenv func(string) string, stdout, stderr io.Writer, opts Options) int {
	masker := mask.FromEnv(getenv(magosv1.EnvSensitiveEnv), getenv)
	mout, merr := masker.NewWriter(stdout), masker.NewWriter(stderr)
	defer func() { _ = mout.Close(); _ = merr.Close() }()
	hide := func(values ...string) {
		masker = masker.With(values...)
		mout.Add(values...)
		merr.Add(values...)
	}
	log := slog.New(slog.NewTextHandler(merr, nil)).With("phase", phase)
	if short := mask.TooShortIn(getenv(magosv1.EnvSensitiveEnv), getenv); len(short) > 0 {
		log.Warn("Sensitive values too short to be masked in output", "variables", short, "minLength", mask.MinLen)
	}

	result := magosv1.RunResult{Phase: phase, Contract: magosv1.RunContractMajor, RunnerVersion: opts.Version}
	cfg, err := magosv1.ParseRunSpec(phase, getenv)
	if err != nil {
		err = report.Failed(magosv1.ReasonInvalidConfig, err)
	} else {
		log = log.With("namespace", cfg.Namespace, "workspace", cfg.Workspace, "runID", cfg.RunID)
		maskString := func(s string) string { return masker.String(s) }
		r := &runner{cfg: cfg, opts: opts, log: log, stdout: mout, stderr: merr, result: &result, hide: hide, mask: maskString}
		err = r.run(ctx)
		r.close()
	}
	if err != nil && ctx.Err() != nil {
		if e, ok := report.As(err); !ok || e.Result == magosv1.ResultFailed {
			err = report.Failed(magosv1.ReasonCanceled, fmt.Errorf("the run was interrupted: %w", err))
		}
	}
	report.FromError(&result, err, magosv1.ReasonRunFailed)
	result.Message = masker.String(result.Message)
	result.LockHolder = masker.String(result.LockHolder)

	path := magosv1.DefaultTerminationMessagePath
	if cfg != nil {
		path = cfg.TerminationMessage
	} else if p := getenv(magosv1.EnvTerminationMessage); p != "" {
		path = p
	}
	if err != nil {
		log.Error("Run did not succeed", "result", result.Result, "reason", result.Reason, "message", result.Message)
	} else {
		log.Info("Run succeeded", "message", result.Message)
	}
	if werr := report.Write(path, result); werr != nil {
		log.Error("Writing the run result failed", "error", werr)
		return 1
	}
	return report.ExitCode(result.Result)
}

// run does the phase's work.
func (r *runner) run(ctx context.Context) error {
	cfg := r.cfg
	r.log.Info("Starting run", "revision", cfg.Revision, "engine", cfg.Engine, "version", cfg.EngineVersion, "planID", cfg.PlanID, "drift", cfg.Drift)
	if magosv1.RunPlans(cfg.Phase) || cfg.Phase == magosv1.RunApply {
		r.result.PlanID = cfg.PlanID
	}
	r.result.Steps = &magosv1.RunSteps{}
	var err error
	if r.kube = r.opts.Kube; r.kube == nil {
		if r.kube, err = kube.NewClient(); err != nil {
			return report.Failed(magosv1.ReasonKubernetesClient, err)
		}
	}

	// An apply checks the stored plan before doing anything else, and reads
	// the plan file it holds.
	var stored *planstore.Plan
	if cfg.Phase == magosv1.RunApply {
		if stored, err = r.loadApprovedPlan(ctx); err != nil {
			return err
		}
		if _, err = r.savedPlan(stored); err != nil {
			return err
		}
	}

	var configDir string
	if err := timed(&r.result.Steps.Fetch, func() (err error) { configDir, err = r.fetchConfig(ctx); return err }); err != nil {
		return err
	}
	binary, err := engine.Resolve(cfg.VersionsDir, cfg.Engine, cfg.EngineVersion, cfg.EngineBinary())
	if err != nil {
		return report.Failed(magosv1.ReasonEngineNotFound, err)
	}
	backendEnv, err := r.setUpBackend(configDir)
	if err != nil {
		return err
	}
	if err := engine.PrepareEnv(cfg.WorkDir, backendEnv); err != nil {
		return report.Failed(magosv1.ReasonInitFailed, err)
	}
	eng, err := engine.New(binary, configDir, cfg.ShutdownWait, r.stdout, r.stderr)
	if err != nil {
		return report.Failed(magosv1.ReasonEngineNotFound, err)
	}
	if r.needsInit(stored) {
		r.log.Info("Initialising", "dir", cfg.Path, "engineVersion", cfg.EngineVersion)
		if err := r.init(ctx, eng); err != nil {
			return err
		}
	} else {
		r.log.Info("Not initialising: the stored plan carries the configuration and needs no provider installed", "dir", cfg.Path, "engineVersion", cfg.EngineVersion)
	}
	switch cfg.Phase {
	case magosv1.RunPlan:
		return r.plan(ctx, eng)
	case magosv1.RunApply:
		return r.apply(ctx, eng, configDir, stored)
	case magosv1.RunPlanApply:
		return r.planApply(ctx, eng, configDir)
	default:
		return r.destroy(ctx, eng, configDir)
	}
}

// fetchConfig fetches and extracts the artifact into a fresh directory and
// returns the configuration directory inside it.
func (r *runner) fetchConfig(ctx context.Context) (string, error) {
	root := filepath.Join(r.cfg.WorkDir, "src")
	if err := os.RemoveAll(root); err != nil {
		return "", report.Failed(magosv1.ReasonArtifactFetchFailed, err)
	}
	// In a Pod the work directory is inside an emptyDir that starts empty.
	if err := os.MkdirAll(r.cfg.WorkDir, 0o700); err != nil {
		return "", report.Failed(magosv1.ReasonArtifactFetchFailed, err)
	}
	fetcher := r.opts.Fetcher
	if fetcher == nil {
		fetcher = artifact.DefaultFetcher()
	}
	configured := *fetcher
	if r.cfg.ArtifactTokenFile != "" {
		configured.TokenFile = r.cfg.ArtifactTokenFile
	}
	configured.Retrying = func(err error, wait time.Duration) {
		r.log.Info("Fetching the artifact failed; retrying", "error", err, "wait", wait)
	}
	fetcher = &configured
	r.log.Info("Fetching artifact", "url", artifact.Redact(r.cfg.ArtifactURL), "digest", r.cfg.ArtifactDigest)
	err := artifact.FetchAndExtract(ctx, fetcher, r.cfg.ArtifactURL, r.cfg.ArtifactDigest, root, artifact.DefaultLimits())
	switch {
	case errors.Is(err, artifact.ErrDigestMismatch):
		return "", report.Failed(magosv1.ReasonArtifactDigestMismatch, err)
	case errors.Is(err, artifact.ErrRejected):
		return "", report.Failed(magosv1.ReasonArtifactRejected, err)
	case err != nil:
		return "", report.Failed(magosv1.ReasonArtifactFetchFailed, err)
	}
	dir, err := artifact.ConfigDir(root, r.cfg.Path)
	if err != nil {
		return "", report.Failed(magosv1.ReasonPathNotFound, err)
	}
	// The engine writes errored.tfstate after a failed state write, and the
	// run saves that file as the Workspace's state: one that came with the
	// artifact would be taken for the engine's.
	if err := os.Remove(filepath.Join(dir, erroredStateFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", report.Failed(magosv1.ReasonArtifactRejected, fmt.Errorf("removing the artifact's %s: %w", erroredStateFile, err))
	}
	return dir, nil
}

// setUpBackend writes the backend override and, for the default backend,
// starts the state server. It returns the environment the engine needs.
func (r *runner) setUpBackend(configDir string) (map[string]string, error) {
	if r.cfg.BackendConfig != "" {
		r.log.Info("Using the Workspace's own backend configuration")
		if err := statebackend.WriteUserOverride(configDir, r.cfg.BackendConfig); err != nil {
			return nil, report.Failed(magosv1.ReasonBackendFailed, err)
		}
		// It comes from a Secret: its values (credentials among them) are
		// masked.
		secrets, err := statebackend.UserBackendValues(r.cfg.BackendConfig)
		if err != nil {
			return nil, report.Failed(magosv1.ReasonBackendFailed, err)
		}
		r.hide(secrets...)
		return nil, nil
	}
	store := &statebackend.Store{
		Secrets:     r.kube.CoreV1().Secrets(r.cfg.Namespace),
		Leases:      r.kube.CoordinationV1().Leases(r.cfg.Namespace),
		Workspace:   r.cfg.Workspace,
		StateSecret: r.cfg.StateSecret,
		LockLease:   r.cfg.LockLease,
	}
	srv, err := statebackend.Start(store, r.log.With("component", "stateBackend"))
	if err != nil {
		return nil, report.Failed(magosv1.ReasonBackendFailed, err)
	}
	r.backend = srv
	if r.cfg.Phase == magosv1.RunPlanApply {
		// Plan and apply take the lock once for the run.
		srv.HoldLock()
	}
	r.hide(srv.Password())
	if err := statebackend.WriteHTTPOverride(configDir); err != nil {
		return nil, report.Failed(magosv1.ReasonBackendFailed, err)
	}
	r.log.Info("Serving state", "secret", r.cfg.StateSecret, "lease", r.cfg.LockLease)
	return srv.Env(), nil
}

// engineNotRunnable is the run error of an engine binary that did not
// start at all (nil for any other error). The runner does not start the
// engine just to ask its version: the first command it runs finds out.
func (r *runner) engineNotRunnable(err error) error {
	if !engine.StartFailed(err) {
		return nil
	}
	return report.Failed(magosv1.ReasonEngineNotFound, fmt.Errorf("running %s %s: %w", r.cfg.Engine, r.cfg.EngineVersion, err))
}

// engineError turns an engine failure into a run error: a held lock is
// Locked, anything else Failed with reason.
func (r *runner) engineError(reason, command string, err error) error {
	if notRunnable := r.engineNotRunnable(err); notRunnable != nil {
		return notRunnable
	}
	if r.backend != nil {
		if held, ok := r.backend.LockConflict(); ok {
			return report.Locked(held.Holder(), fmt.Errorf("%s: the state is locked by %s", command, held.Holder()))
		}
		if berr := r.backend.LastError(); berr != nil {
			return report.Failed(reason, fmt.Errorf("%s failed: %s (state backend: %v)", command, engine.Summary(err), berr))
		}
	}
	if engine.IsLockError(err) {
		holder := engine.LockHolder(err)
		return report.Locked(holder, fmt.Errorf("%s: the state is locked by %s", command, holder))
	}
	return report.Failed(reason, fmt.Errorf("%s failed: %s", command, engine.Summary(err)))
}

func (r *runner) close() {
	if r.backend != nil {
		if err := r.backend.Close(); err != nil {
			r.log.Error("Stopping the state backend failed", "error", err)
		}
	}
}

// owner is the Workspace as the owner of the objects the run creates.
func (r *runner) owner() metav1.OwnerReference {
	return planstore.WorkspaceOwner(r.cfg.Workspace, r.cfg.WorkspaceUID)
}
