package executor

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// DefaultNodeName is the spec.nodeName of the Pods the executor creates.
const DefaultNodeName = "local"

// Options configure an Executor.
type Options struct {
	// RunnerPath is the binary run for every container; the container's
	// image and command are ignored, its args are passed on. Required.
	RunnerPath string
	// LogDir receives one file per Pod, <namespace>_<pod>.log, holding what
	// the process wrote to stdout and stderr. Default: a new temporary
	// directory, removed when the executor stops.
	LogDir string
	// WorkRoot holds the per-Pod scratch directories (home, work dir,
	// termination message, kubeconfig). Default: the system temp directory.
	WorkRoot string
	// KeepWorkDirs keeps the per-Pod scratch directories after the process
	// ends, for debugging.
	KeepWorkDirs bool
	// Namespace restricts the executor to one namespace; empty means all.
	Namespace string
	// JobSelector selects the Jobs the executor runs. Default: Jobs with the
	// magos.dev/workspace label.
	JobSelector labels.Selector
	// NodeName is the spec.nodeName given to the Pods. Default: "local".
	NodeName string
	// Env is added to every process's environment after the container's
	// own, overriding it: for paths that differ from the image's, such as
	// MAGOS_VERSIONS_DIR.
	Env map[string]string
	// EnginesDir (<engine>/<version>/<binary>) is where the executor takes
	// engines from when it imitates the engine image's init container.
	EnginesDir string
	// UnpullableImages are image references whose pull fails: a container
	// with one waits in ErrImagePull, then ImagePullBackOff, as with the
	// kubelet, until its Pod is deleted or its Job's deadline passes.
	UnpullableImages []string
	// LogOutput, when set, also receives every line the processes print,
	// prefixed with "<namespace>/<pod>: ".
	LogOutput io.Writer
	// ConfigErrorRetries is how many more times a container whose
	// environment cannot be resolved (CreateContainerConfigError) is retried
	// before its Pod is failed. Default 3; negative retries until the Job's
	// deadline, as the kubelet does.
	ConfigErrorRetries *int
	// ConfigErrorInterval is the wait between those attempts. Default 1s.
	ConfigErrorInterval time.Duration
	// MissingServiceAccountRetry is how long the job controller waits before
	// trying again to create a Pod whose ServiceAccount does not exist (the
	// apiserver's ServiceAccount admission refuses such a Pod). Default 1s.
	MissingServiceAccountRetry time.Duration
	// MaxProcesses caps how many processes run at once, like a node's
	// capacity: further Pods wait in Pending (ContainerCreating) until one ends.
	// Zero means no cap.
	MaxProcesses int
	// Logger receives the executor's own logs. Default: ctrl.Log.
	Logger *logr.Logger

	// ownLogDir: the executor made LogDir and removes it when it stops.
	ownLogDir bool
}

// withDefaults validates the options and fills in the defaults.
func (o Options) withDefaults() (Options, error) {
	if o.RunnerPath == "" {
		return o, errors.New("executor: Options.RunnerPath is required")
	}
	runner, err := filepath.Abs(o.RunnerPath)
	if err != nil {
		return o, err
	}
	if st, err := os.Stat(runner); err != nil {
		return o, fmt.Errorf("executor: runner binary: %w", err)
	} else if st.IsDir() {
		return o, fmt.Errorf("executor: runner binary %s is a directory", runner)
	}
	o.RunnerPath = runner
	if o.EnginesDir != "" {
		if o.EnginesDir, err = filepath.Abs(o.EnginesDir); err != nil {
			return o, err
		}
	}
	if o.WorkRoot == "" {
		o.WorkRoot = os.TempDir()
	}
	if o.LogDir == "" {
		if o.LogDir, err = os.MkdirTemp(o.WorkRoot, "magos-executor-logs-"); err != nil {
			return o, err
		}
		o.ownLogDir = true
	} else if err := os.MkdirAll(o.LogDir, 0o755); err != nil {
		return o, err
	}
	if o.JobSelector == nil {
		req, err := labels.NewRequirement(magosv1.WorkspaceLabel, selection.Exists, nil)
		if err != nil {
			return o, err
		}
		o.JobSelector = labels.NewSelector().Add(*req)
	}
	if o.NodeName == "" {
		o.NodeName = DefaultNodeName
	}
	if o.ConfigErrorRetries == nil {
		retries := 3
		o.ConfigErrorRetries = &retries
	}
	if o.ConfigErrorInterval <= 0 {
		o.ConfigErrorInterval = time.Second
	}
	if o.MissingServiceAccountRetry <= 0 {
		o.MissingServiceAccountRetry = time.Second
	}
	if o.Logger == nil {
		l := ctrl.Log.WithName("executor")
		o.Logger = &l
	}
	return o, nil
}
