// Package config is the workspace-controller's configuration as its flags
// set it: the options (Options) every run's Job and the run queue are built
// from, the cluster guards (Guards, PlacementGuards) no Workspace can opt
// out of, with their pure checks, and how runners reach their artifact
// (ArtifactProxy). It reads nothing from the cluster; the reconciler
// applies it.
package config

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/policyprotocol"
	"github.com/magos-dev/magos/controllers/internal/artifacthost"
	"github.com/magos-dev/magos/controllers/internal/runqueue"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
	"github.com/magos-dev/magos/controllers/internal/workspace/schedule"
)

// DefaultScratchSize is the default size limit of a runner's scratch
// volume: the artifact (at most 256 MiB packed, 1 GiB unpacked), the
// engine's providers and the plan, with room to spare.
var DefaultScratchSize = resource.MustParse("4Gi")

// DefaultOpenTofuImage is the built-in engine image template of OpenTofu.
const DefaultOpenTofuImage = "ghcr.io/magos-dev/magos-engine-opentofu:" + magosv1.EngineImageVersionPlaceholder

// Options configure the workspace-controller.
type Options struct {
	// RunnerImage is the default runner image.
	RunnerImage string
	// RunnerImagePullSecrets name Secrets every runner Pod pulls its images
	// with, in the Workspace's own namespace, before those the Workspace and
	// its Project name.
	RunnerImagePullSecrets []string
	// VersionsDir is where the runner finds engine binaries; the engines
	// volume is mounted there when an engine image delivers the engine.
	VersionsDir string
	// EngineImages are the engine image templates per engine ("{version}"
	// is replaced with the engine version); a Workspace or Project may
	// override them with spec.terraform.image.
	EngineImages engineImageFlag
	// DefaultEngineVersion is used when neither Workspace nor Project names one.
	DefaultEngineVersion string
	// RunTimeout is the default deadline of one run.
	RunTimeout time.Duration
	// MaxRunTimeout is the longest deadline of one run: a longer
	// spec.runner.timeout (of a Workspace or its Project) is cut to it.
	// Zero is no maximum.
	MaxRunTimeout time.Duration
	// MinInterval is the shortest drift interval: a shorter spec.interval
	// (of a Workspace or its Project) is raised to it. Zero is no minimum.
	MinInterval time.Duration
	// MaxPlanChunks bounds the plan Secrets of one Workspace (each holds
	// magosv1.PlanChunkBytes of the stored plan): a plan that needs more
	// fails with PlanStorageLimitExceeded. Zero is DefaultMaxPlanChunks.
	MaxPlanChunks int
	// JobTTL is how long finished Jobs are kept.
	JobTTL time.Duration
	// RetryInterval is how long a failed run waits before it is retried
	// with the same inputs.
	RetryInterval time.Duration
	// RunnerEnv are extra environment variables for every runner container
	// (e.g. proxy settings or a CLI config file baked into the image). They
	// may set engine settings but not the run contract (MAGOS_*); their
	// values are masked in runner output like sensitive variables.
	RunnerEnv envFlag
	// ScratchSize is the size limit of the runner's scratch volume (the
	// emptyDir at /tmp); zero means DefaultScratchSize. A run that writes
	// more is evicted by the kubelet instead of filling the node's disk.
	ScratchSize resource.Quantity
	// PolicyTimeout bounds one policy evaluation of a plan; zero means
	// policy.DefaultTimeout.
	PolicyTimeout time.Duration
	// PolicyEnginePath is the policy-engine binary, started the first time
	// a plan has policies to pass; empty means DefaultPolicyEnginePath.
	PolicyEnginePath string
	// AllowIncompletePolicySandbox lets the controller start when the
	// policy engine cannot sandbox itself fully on this kernel or build
	// (CheckPolicySandbox).
	AllowIncompletePolicySandbox bool
	// MaxPlanJSONBytes is the most plan JSON the policy gate unpacks;
	// zero means DefaultMaxPlanJSONBytes. A bigger plan fails the gate.
	MaxPlanJSONBytes int64
	// RunnerRequests are the runner container's resource requests unless
	// its spec.runner.resources requests that resource (or limits it,
	// which makes the request the limit); nil means DefaultRunnerRequests.
	// Requests keep runner Pods out of the BestEffort class, the first
	// the kubelet evicts under node pressure.
	RunnerRequests corev1.ResourceList
	// RunnerShutdownWait is how long the engine may take to stop once the
	// runner is told to (SIGTERM); zero means magosv1.DefaultShutdownWait.
	// The Pod's grace period is this plus magosv1.ShutdownMargin.
	RunnerShutdownWait time.Duration
	// MaxConcurrentRuns bounds the runs in progress of this controller
	// (shard); MaxConcurrentRunsPerNamespace those of one namespace's
	// Workspaces (AutoPerNamespace: half of MaxConcurrentRuns, rounded
	// up); MaxConcurrentRunsPerProject those of one Project's Workspaces.
	// Zero is unbounded. Runs over a bound wait in the run queue
	// (runqueue), applies and destroys first, the namespaces in turn.
	MaxConcurrentRuns, MaxConcurrentRunsPerNamespace, MaxConcurrentRunsPerProject int
	// RequestedPlanInterval rate-limits the plans people ask for (a
	// reconcile or plan request) per namespace: a namespace's requested
	// plan admitted less than this after its last one at normal priority
	// waits at drift priority. Zero is no limit.
	RequestedPlanInterval time.Duration
	// MaxPlansPerNamespacePerMinute bounds the plans the Workspaces of one
	// namespace start per PlanRateWindow (schedule.PlanRate); zero is no
	// bound. With MaxPlanChunks it bounds the plan bytes a namespace writes
	// to etcd (PlanWriteBudget).
	MaxPlansPerNamespacePerMinute int
	// PlanRateWindow is that bound's window; zero means a minute. Tests
	// shorten it.
	PlanRateWindow time.Duration
	// DriftJitter is the part of a drift interval by which a re-plan may
	// come early, so Workspaces planned together do not re-plan together.
	DriftJitter float64
	// Guards are the cluster-level rules no Workspace can opt out of.
	Guards Guards
	// ArtifactProxy is how runners reach their artifact.
	ArtifactProxy ArtifactProxy
	// ArtifactHosts are the hosts the controller downloads artifacts from,
	// for what a Workspace reads and through the artifact proxy; nil allows
	// any (the flag's default is source-controller's Service in
	// flux-system).
	ArtifactHosts artifacthost.Hosts
}

// PlanRate is the bound on each namespace's plan starts; nil when there is
// none.
func (o Options) PlanRate() *schedule.PlanRate {
	return schedule.NewPlanRate(o.MaxPlansPerNamespacePerMinute, o.PlanRateWindow)
}

// AutoPerNamespace is the MaxConcurrentRunsPerNamespace that is half of
// MaxConcurrentRuns, rounded up: one namespace never holds every slot of a
// controller with more than one.
const AutoPerNamespace = -1

// RunLimits are the run queue's bounds.
func (o Options) RunLimits() runqueue.Limits {
	perNamespace := o.MaxConcurrentRunsPerNamespace
	if perNamespace == AutoPerNamespace {
		perNamespace = (o.MaxConcurrentRuns + 1) / 2
	}
	return runqueue.Limits{Total: o.MaxConcurrentRuns, PerNamespace: perNamespace, PerProject: o.MaxConcurrentRunsPerProject}
}

// RunDeadline is the deadline of a run whose Workspace asks for timeout
// (RunTimeout when zero), cut to MaxRunTimeout; cut is the deadline asked
// for when it was cut, else zero.
func (o Options) RunDeadline(timeout time.Duration) (deadline, cut time.Duration) {
	if timeout <= 0 {
		timeout = o.RunTimeout
	}
	if o.MaxRunTimeout > 0 && timeout > o.MaxRunTimeout {
		return o.MaxRunTimeout, timeout
	}
	return timeout, 0
}

// DefaultRunnerRequests are the default RunnerRequests: enough for the
// engine with a few small providers.
var DefaultRunnerRequests = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("100m"),
	corev1.ResourceMemory: resource.MustParse("256Mi"),
}

// runnerRequests is RunnerRequests or its default.
func (o Options) runnerRequests() corev1.ResourceList {
	if o.RunnerRequests == nil {
		return DefaultRunnerRequests
	}
	return o.RunnerRequests
}

// shutdownWait is RunnerShutdownWait or its default.
func (o Options) shutdownWait() time.Duration {
	if o.RunnerShutdownWait <= 0 {
		return magosv1.DefaultShutdownWait
	}
	return o.RunnerShutdownWait
}

// terminationGrace is the runner Pod's terminationGracePeriodSeconds: the
// engine's shutdown wait and the runner's margin after it, in whole
// seconds, rounded up.
func (o Options) terminationGrace() int64 {
	d := o.shutdownWait() + magosv1.ShutdownMargin
	return int64((d + time.Second - 1) / time.Second)
}

// DefaultMaxPlanJSONBytes is the default MaxPlanJSONBytes: the JSON of
// plans with thousands of resources, far below the controller's memory.
const DefaultMaxPlanJSONBytes = 32 << 20

// PlanJSONLimit is MaxPlanJSONBytes or its default.
func (o Options) PlanJSONLimit() int64 {
	if o.MaxPlanJSONBytes <= 0 {
		return DefaultMaxPlanJSONBytes
	}
	return o.MaxPlanJSONBytes
}

// PolicyEngineBinary is the name of the policy engine binary.
const PolicyEngineBinary = "policy-engine"

// DefaultPolicyEnginePath is the policy engine next to the running
// binary, as the workspace-controller image and `make build` place it; empty
// if the running binary's path is unknown.
func DefaultPolicyEnginePath() string {
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	return filepath.Join(filepath.Dir(self), PolicyEngineBinary)
}

// CheckPolicySandbox refuses to start with a policy engine whose sandbox
// (as it reported it, or probeErr when it could not) does not take both
// files and TCP from it, unless AllowIncompletePolicySandbox. The engine
// evaluates policies over plans config code shapes, in the controller's
// container, beside its ServiceAccount token.
func (o Options) CheckPolicySandbox(s policyprotocol.Sandbox, probeErr error) error {
	if o.AllowIncompletePolicySandbox || (probeErr == nil && s.Complete()) {
		return nil
	}
	why := s.Missing
	if probeErr != nil {
		why = "its sandbox cannot be checked: " + probeErr.Error()
	}
	return fmt.Errorf("the policy engine cannot sandbox itself fully (%s); "+
		"run on Linux 6.7 or later with a binary built without cgo, or start with --allow-incomplete-policy-sandbox", why)
}

// PolicyEngine is PolicyEnginePath or its default.
func (o Options) PolicyEngine() string {
	if o.PolicyEnginePath == "" {
		return DefaultPolicyEnginePath()
	}
	return o.PolicyEnginePath
}

// scratchSize is ScratchSize or its default.
func (o Options) scratchSize() resource.Quantity {
	if o.ScratchSize.IsZero() {
		return DefaultScratchSize
	}
	return o.ScratchSize
}

// envFlag collects repeated NAME=VALUE flags.
type envFlag []string

func (e *envFlag) String() string { return strings.Join(*e, ",") }

// Set adds one NAME=VALUE entry; the run contract's MAGOS_* names are
// the controller's own.
func (e *envFlag) Set(v string) error {
	name, _, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE, got a value without =")
	}
	if strings.HasPrefix(name, "MAGOS_") {
		return fmt.Errorf("%s is set by the workspace-controller itself", name)
	}
	*e = append(*e, v)
	return nil
}

// JobConfig is what the options set in every run's Job.
func (o Options) JobConfig() runjob.Config {
	return runjob.Config{
		VersionsDir: o.VersionsDir, RunnerEnv: o.RunnerEnv, ShutdownWait: o.shutdownWait(), TerminationGrace: o.terminationGrace(),
		ArtifactProxyURL: o.ArtifactProxy.URL, ScratchSize: o.scratchSize(), RunnerRequests: o.runnerRequests(),
		JobTTL: o.JobTTL, RunnerImagePullSecrets: o.RunnerImagePullSecrets,
	}
}

// BindFlags registers the options on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.RunnerImage, "runner-image", "ghcr.io/magos-dev/magos-runner:latest", "Default image of the runner container.")
	fs.Func("runner-image-pull-secrets", "Comma-separated names of Secrets every runner Pod pulls its images with, looked up in the Workspace's own namespace (repeatable); "+
		"the controller never reads or copies them, and a namespace without one pulls without it.", appendPatterns(&o.RunnerImagePullSecrets))
	fs.StringVar(&o.VersionsDir, "runner-versions-dir", "/opt/magos/engines", "Directory of engine binaries inside the runner (<dir>/<engine>/<version>/<binary>).")
	o.EngineImages = engineImageFlag{magosv1.EngineOpenTofu: DefaultOpenTofuImage}
	fs.Var(o.EngineImages, "engine-image", "ENGINE=IMAGE: the engine image template of ENGINE (opentofu or terraform), {version} is replaced with the version; "+
		"an empty IMAGE removes the engine's template (repeatable). Default: opentofu="+DefaultOpenTofuImage+".")
	fs.StringVar(&o.DefaultEngineVersion, "default-engine-version", "1.10.6", "Engine version for Workspaces that name none.")
	fs.DurationVar(&o.RunTimeout, "run-timeout", 30*time.Minute, "Default deadline of one plan or apply run.")
	fs.DurationVar(&o.MaxRunTimeout, "max-run-timeout", time.Hour,
		"Longest deadline of one run: a longer spec.runner.timeout is cut to it (a Warning event says so). 0 is no maximum.")
	fs.DurationVar(&o.MinInterval, "min-interval", time.Minute,
		"Shortest drift interval: a shorter spec.interval is raised to it (a Warning event says so), so no Workspace re-plans, and rewrites its plan Secrets, more often. 0 is no minimum.")
	fs.IntVar(&o.MaxPlanChunks, "max-plan-chunks", DefaultMaxPlanChunks, fmt.Sprintf(
		"Most plan Secrets of one Workspace, %d KiB of stored plan each (up to %d): a plan that needs more fails with PlanStorageLimitExceeded.",
		magosv1.PlanChunkBytes>>10, magosv1.MaxPlanChunks))
	fs.DurationVar(&o.JobTTL, "job-ttl", time.Hour, "How long finished run Jobs are kept.")
	fs.Var(&o.RunnerEnv, "runner-env", "Extra NAME=VALUE environment variable for every runner container (repeatable).")
	fs.Func("runner-scratch-size", "Size limit of the runner's scratch volume (default "+DefaultScratchSize.String()+").",
		sizeFlag(func(q resource.Quantity) { o.ScratchSize = q }))
	fs.DurationVar(&o.PolicyTimeout, "policy-timeout", 30*time.Second, "Deadline of one policy evaluation of a plan; a plan not evaluated in time is blocked.")
	fs.StringVar(&o.PolicyEnginePath, "policy-engine-path", DefaultPolicyEnginePath(),
		"The policy-engine binary, started the first time a plan has policies to pass (default: policy-engine next to this binary).")
	fs.BoolVar(&o.AllowIncompletePolicySandbox, "allow-incomplete-policy-sandbox", false,
		"Start even when the policy engine cannot sandbox itself fully (Landlock restricts files from Linux 5.13, TCP from 6.7; a build with cgo, nothing): "+
			"policies are then evaluated by a process that may read the controller's ServiceAccount token or reach the network. "+
			"magos_policy_sandbox_enforced says what the sandbox takes.")
	fs.Func("max-plan-json-size", "Most plan JSON the policy gate unpacks (default 32Mi); a bigger plan is blocked.",
		sizeFlag(func(q resource.Quantity) { o.MaxPlanJSONBytes = q.Value() }))
	o.RunnerRequests = DefaultRunnerRequests.DeepCopy()
	fs.Func("runner-cpu-request", "CPU request of the runner container unless spec.runner.resources sets one; 0 sets none (default 100m).",
		requestFlag(o, corev1.ResourceCPU))
	fs.Func("runner-memory-request", "Memory request of the runner container unless spec.runner.resources sets one; 0 sets none (default 256Mi).",
		requestFlag(o, corev1.ResourceMemory))
	fs.DurationVar(&o.RunnerShutdownWait, "runner-shutdown-wait", magosv1.DefaultShutdownWait,
		"How long the engine may take to stop (finish operations in flight, write state, unlock) when its run is stopped; "+
			"the runner Pod's grace period is this plus "+magosv1.ShutdownMargin.String()+".")
	fs.DurationVar(&o.RetryInterval, "retry-interval", 5*time.Minute, "How long a failed run waits before it is retried with unchanged inputs.")
	fs.IntVar(&o.MaxConcurrentRuns, "max-concurrent-runs", 20,
		"Most runs (plan, apply, destroy Jobs) this controller has in progress at once; more wait in a queue, applies and destroys first, drift re-plans last, "+
			"the namespaces in turn. 0 is unbounded.")
	fs.IntVar(&o.MaxConcurrentRunsPerNamespace, "max-concurrent-runs-per-namespace", AutoPerNamespace,
		"Most runs the Workspaces of one namespace have in progress at once; -1 is half of --max-concurrent-runs, rounded up; 0 is unbounded (the controller's bound still holds).")
	fs.IntVar(&o.MaxConcurrentRunsPerProject, "max-concurrent-runs-per-project", 0,
		"Most runs the Workspaces of one Project have in progress at once; 0 is unbounded (the controller's bound still holds).")
	fs.DurationVar(&o.RequestedPlanInterval, "requested-plan-interval", time.Minute,
		"Per namespace, a plan people ask for (reconcile or plan request) runs at normal priority at most once in this interval; "+
			"the namespace's other requested plans in it wait at drift priority. 0 is no limit.")
	fs.IntVar(&o.MaxPlansPerNamespacePerMinute, "max-plans-per-namespace-per-minute", 10,
		"Most plans the Workspaces of one namespace start in a minute; more wait, holding no slot (each plan rewrites its plan Secrets, up to --max-plan-chunks). "+
			"Applies and destroys are not counted. 0 is no bound. With the defaults one namespace writes at most about 1.3 GiB of plans within the 10 minutes "+
			"of history etcd keeps under the apiserver's default compaction, below etcd's default 2 GiB quota.")
	fs.Float64Var(&o.DriftJitter, "drift-jitter", 0.1,
		"Part of a drift interval (0 to 1) by which a drift re-plan may come early, so Workspaces planned at the same time do not all re-plan at the same time.")
	o.Guards.BindFlags(fs)
	o.ArtifactProxy.BindFlags(fs)
	o.ArtifactHosts.BindFlag(fs)
}

// Validate refuses option values no flag parser catches.
func (o Options) Validate() error {
	if o.MaxConcurrentRuns < 0 || o.MaxConcurrentRunsPerProject < 0 {
		return fmt.Errorf("--max-concurrent-runs and --max-concurrent-runs-per-project must be 0 (unbounded) or more")
	}
	if o.MaxConcurrentRunsPerNamespace < AutoPerNamespace {
		return fmt.Errorf("--max-concurrent-runs-per-namespace must be -1 (half of --max-concurrent-runs), 0 (unbounded) or more")
	}
	if o.MaxPlansPerNamespacePerMinute < 0 {
		return fmt.Errorf("--max-plans-per-namespace-per-minute must be 0 (no bound) or more")
	}
	if o.MaxRunTimeout < 0 || o.RequestedPlanInterval < 0 || o.MinInterval < 0 {
		return fmt.Errorf("--max-run-timeout, --requested-plan-interval and --min-interval must be 0 (none) or more")
	}
	if o.MaxRunTimeout > 0 && o.RunTimeout > o.MaxRunTimeout {
		return fmt.Errorf("--run-timeout (%s) is longer than --max-run-timeout (%s)", o.RunTimeout, o.MaxRunTimeout)
	}
	if o.MaxPlanChunks < 0 || o.MaxPlanChunks > magosv1.MaxPlanChunks {
		return fmt.Errorf("--max-plan-chunks must be between 1 and %d, got %d", magosv1.MaxPlanChunks, o.MaxPlanChunks)
	}
	if o.DriftJitter < 0 || o.DriftJitter > 1 {
		return fmt.Errorf("--drift-jitter must be between 0 and 1, got %g", o.DriftJitter)
	}
	if err := o.ArtifactHosts.Validate(); err != nil {
		return err
	}
	if err := o.ArtifactProxy.Validate(); err != nil {
		return err
	}
	return o.Guards.Validate(o.RunnerImage)
}

// requestFlag sets the default request of one resource; 0 removes it.
func requestFlag(o *Options, name corev1.ResourceName) func(string) error {
	return func(v string) error {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return err
		}
		if q.Sign() < 0 {
			return fmt.Errorf("want a size of at least 0, got %q", v)
		}
		if o.RunnerRequests == nil {
			o.RunnerRequests = corev1.ResourceList{}
		}
		if q.IsZero() {
			delete(o.RunnerRequests, name)
		} else {
			o.RunnerRequests[name] = q
		}
		return nil
	}
}

// sizeFlag parses a positive quantity (e.g. 4Gi) and passes it to set.
func sizeFlag(set func(resource.Quantity)) func(string) error {
	return func(v string) error {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return err
		}
		if q.Sign() <= 0 {
			return fmt.Errorf("want a positive size, got %q", v)
		}
		set(q)
		return nil
	}
}

// DefaultMaxPlanChunks is --max-plan-chunks unless set: 12 MiB of stored
// (compressed) plan, far more than plans of thousands of resources need.
const DefaultMaxPlanChunks = 16

// PlanChunks is MaxPlanChunks, DefaultMaxPlanChunks when unset, at
// least the chunks every Workspace gets reserved.
func (o Options) PlanChunks() int {
	if o.MaxPlanChunks <= 0 {
		return DefaultMaxPlanChunks
	}
	return max(o.MaxPlanChunks, magosv1.DefaultPlanChunks)
}
