package workspace

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
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
	// MaxPlanJSONBytes is the most plan JSON the policy gate unpacks;
	// zero means DefaultMaxPlanJSONBytes. A bigger plan fails the gate.
	MaxPlanJSONBytes int64
	// Guards are the cluster-level rules no Workspace can opt out of.
	Guards Guards
}

// DefaultMaxPlanJSONBytes is the default MaxPlanJSONBytes: the JSON of
// plans with thousands of resources, far below the controller's memory.
const DefaultMaxPlanJSONBytes = 32 << 20

// maxPlanJSONBytes is MaxPlanJSONBytes or its default.
func (o Options) maxPlanJSONBytes() int64 {
	if o.MaxPlanJSONBytes <= 0 {
		return DefaultMaxPlanJSONBytes
	}
	return o.MaxPlanJSONBytes
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

// names are the entries' names.
func (e envFlag) names() []string {
	out := make([]string, 0, len(e))
	for _, kv := range e {
		name, _, _ := strings.Cut(kv, "=")
		out = append(out, name)
	}
	return out
}

// BindFlags registers the options on fs.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.RunnerImage, "runner-image", "ghcr.io/magos-dev/magos-runner:latest", "Default image of the runner container.")
	fs.StringVar(&o.VersionsDir, "runner-versions-dir", "/opt/magos/engines", "Directory of engine binaries inside the runner (<dir>/<engine>/<version>/<binary>).")
	o.EngineImages = engineImageFlag{magosv1.EngineOpenTofu: DefaultOpenTofuImage}
	fs.Var(o.EngineImages, "engine-image", "ENGINE=IMAGE: the engine image template of ENGINE (opentofu or terraform), {version} is replaced with the version; "+
		"an empty IMAGE removes the engine's template (repeatable). Default: opentofu="+DefaultOpenTofuImage+".")
	fs.StringVar(&o.DefaultEngineVersion, "default-engine-version", "1.10.6", "Engine version for Workspaces that name none.")
	fs.DurationVar(&o.RunTimeout, "run-timeout", 30*time.Minute, "Default deadline of one plan or apply run.")
	fs.DurationVar(&o.JobTTL, "job-ttl", time.Hour, "How long finished run Jobs are kept.")
	fs.Var(&o.RunnerEnv, "runner-env", "Extra NAME=VALUE environment variable for every runner container (repeatable).")
	fs.Func("runner-scratch-size", "Size limit of the runner's scratch volume (default "+DefaultScratchSize.String()+").",
		sizeFlag(func(q resource.Quantity) { o.ScratchSize = q }))
	fs.DurationVar(&o.PolicyTimeout, "policy-timeout", 30*time.Second, "Deadline of one policy evaluation of a plan; a plan not evaluated in time is blocked.")
	fs.Func("max-plan-json-size", "Most plan JSON the policy gate unpacks (default 32Mi); a bigger plan is blocked.",
		sizeFlag(func(q resource.Quantity) { o.MaxPlanJSONBytes = q.Value() }))
	fs.DurationVar(&o.RetryInterval, "retry-interval", 5*time.Minute, "How long a failed run waits before it is retried with unchanged inputs.")
	o.Guards.BindFlags(fs)
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
