// Command executor runs Magos Jobs on a control plane that has no job
// controller and no kubelet (the local control plane of `make demo`): it
// creates each Job's Pod, runs the runner binary as a process that
// impersonates the Pod's ServiceAccount, and reports Pod and Job status.
//
//	executor --kubeconfig bin/demo/kubeconfig --runner bin/runner \
//	  --engines-dir bin/engines
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/magos-dev/magos/tools/harness/executor"
)

func main() {
	var (
		opts       executor.Options
		retries    = flag.Int("config-error-retries", 3, "retries of a container whose environment cannot be resolved before its Pod fails; negative retries until the Job's deadline")
		env        = envFlag{}
		unpullable = &listFlag{}
	)
	flag.StringVar(&opts.RunnerPath, "runner", "bin/runner", "binary run for every container (the image is ignored)")
	flag.StringVar(&opts.LogDir, "log-dir", "bin/demo/executor-logs", "directory of the Pods' logs, <namespace>_<pod>.log")
	flag.StringVar(&opts.WorkRoot, "work-root", "", "directory of the Pods' scratch directories (default: the system temp dir)")
	flag.BoolVar(&opts.KeepWorkDirs, "keep-work-dirs", false, "keep the Pods' scratch directories")
	flag.StringVar(&opts.Namespace, "namespace", "", "only run Jobs of this namespace (default: all)")
	flag.StringVar(&opts.EnginesDir, "engines-dir", "", "directory <engine>/<version>/<binary> the engine image's init container is imitated from")
	flag.Var(unpullable, "unpullable-image", "image reference whose pull fails with ErrImagePull/ImagePullBackOff (repeatable)")
	flag.Var(env, "env", "NAME=VALUE added to every process, overriding the container's (repeatable)")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	opts.ConfigErrorRetries, opts.Env, opts.UnpullableImages = retries, env, *unpullable

	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "executor:", err)
		os.Exit(1)
	}
}

func run(opts executor.Options) error {
	// --kubeconfig (registered by controller-runtime), else KUBECONFIG.
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	ex, err := executor.New(cfg, opts)
	if err != nil {
		return err
	}
	fmt.Printf("Running Magos Jobs with %s; Pod logs in %s\n", ex.Options().RunnerPath, ex.Options().LogDir)
	return ex.Start(ctrl.SetupSignalHandler())
}

// envFlag collects NAME=VALUE flags.
type envFlag map[string]string

func (e envFlag) String() string { return "" }

func (e envFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q is not NAME=VALUE", s)
	}
	e[name] = value
	return nil
}

// listFlag collects repeated values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}
