package setup

import (
	"flag"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/metrics"
)

// Version is the build version, set with -ldflags "-X ...setup.Version=v1.2.3".
var Version = "dev"

// Controller is what a binary plugs into Run: its own flags and the
// function that registers its reconcilers.
type Controller interface {
	BindFlags(fs *flag.FlagSet)
	Register(mgr ctrl.Manager, opts Options) error
}

// RegisterFunc is a Controller without flags of its own.
type RegisterFunc func(mgr ctrl.Manager, opts Options) error

// BindFlags binds nothing.
func (f RegisterFunc) BindFlags(*flag.FlagSet) {}

// Register calls f.
func (f RegisterFunc) Register(mgr ctrl.Manager, opts Options) error { return f(mgr, opts) }

// Scheme holds the core, Magos and Flux source types every controller uses.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(magosv1.AddToScheme(s))
	return s
}

// Run parses flags, builds the manager for the controller called name
// (e.g. "workspace") that owns objects like owns (its kind, which
// --watch-label-selector filters), registers its reconcilers and blocks
// until the process is signalled. It returns the process exit code.
func Run(name string, owns client.Object, c Controller) int {
	var opts Options
	opts.BindFlags(flag.CommandLine)
	c.BindFlags(flag.CommandLine)
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	version := flag.Bool("version", false, "Print the version and exit.")
	flag.Parse()
	if *version {
		fmt.Printf("%s-controller %s\n", name, Version)
		return 0
	}

	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)).WithValues("controller", name))
	log := ctrl.Log.WithName("setup")
	if limit, err := applyMemoryLimit(); err != nil {
		log.Error(err, "Unable to read the container's memory limit; the Go runtime has none")
	} else if limit > 0 {
		log.Info("Go runtime memory limit set from the container's", "goMemoryLimitBytes", limit, "share", memoryLimitShare)
	}

	mgr, err := NewManager(name, owns, opts)
	if err != nil {
		log.Error(err, "Unable to create manager")
		return 1
	}
	if err := c.Register(mgr, opts); err != nil {
		log.Error(err, "Unable to register reconcilers")
		return 1
	}
	metrics.SetBuildInfo(name, opts.Shard, Version)

	log.Info("Starting manager", "version", Version, "leaderElection", opts.LeaderElect,
		"lease", LeaseName(name, opts.Shard), "watchLabelSelector", selectorString(opts.WatchLabelSelector))
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "Manager exited with an error")
		return 1
	}
	return 0
}

// Leader election and events, needed by every controller:
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete,namespace=magos-system
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// NewManager builds a manager with the shared options for the controller
// called name that owns objects like owns: one leader election Lease per
// controller and shard, a cache of owns's kind filtered by
// opts.WatchLabelSelector, health and ready probes and the metrics
// endpoint.
func NewManager(name string, owns client.Object, opts Options) (ctrl.Manager, error) {
	if err := opts.validateShard(); err != nil {
		return nil, err
	}
	cacheOpts, err := opts.CacheOptions(owns)
	if err != nil {
		return nil, err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg.UserAgent = "magos-" + name + "-controller/" + Version

	mgrOpts := ctrl.Options{
		Scheme:                        Scheme(),
		Metrics:                       metricsserver.Options{BindAddress: opts.MetricsAddr},
		HealthProbeBindAddress:        opts.ProbeAddr,
		PprofBindAddress:              opts.PprofAddr,
		LeaderElection:                opts.LeaderElect,
		LeaderElectionID:              LeaseName(name, opts.Shard),
		LeaderElectionNamespace:       opts.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &opts.LeaseDuration,
		RenewDeadline:                 &opts.RenewDeadline,
		RetryPeriod:                   &opts.RetryPeriod,
		Controller:                    config.Controller{MaxConcurrentReconciles: opts.Concurrency},
		Cache:                         cacheOpts,
		MapperProvider:                NewMapper,
	}
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// CacheOptions is the cache of the controller that owns objects like
// owns, as its binary builds it (tests build theirs with it too): the
// watched namespaces, the per-kind filters and transforms of
// cacheByObject and, for every other kind, trimMetadata (no managedFields,
// no kubectl last-applied copy: no controller reads them, and they are a
// large part of an object several writers update).
func (o Options) CacheOptions(owns client.Object) (cache.Options, error) {
	byObject, err := o.cacheByObject(owns)
	if err != nil {
		return cache.Options{}, err
	}
	return cache.Options{
		DefaultNamespaces: o.CacheNamespaces(),
		ByObject:          byObject,
		DefaultTransform:  trimMetadata,
	}, nil
}

// cacheByObject are the cache's per-kind filters and transforms: runner
// Pods only (the only Pods a controller reads), Jobs and Pods without
// their templates (cachetrim.go), Workspaces with their common strings
// shared (sharedstrings.go) and, with a WatchLabelSelector, the objects of
// owns's kind in this shard only.
func (o Options) cacheByObject(owns client.Object) (map[client.Object]cache.ByObject, error) {
	runnerPods, err := labels.NewRequirement(magosv1.WorkspaceLabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	workspaces := cache.ByObject{Transform: trimWorkspace}
	byObject := map[client.Object]cache.ByObject{
		&corev1.Pod{}:  {Label: labels.NewSelector().Add(*runnerPods), Transform: trimPod},
		&batchv1.Job{}: {Transform: trimJob},
	}
	if _, ownsWorkspaces := owns.(*magosv1.Workspace); ownsWorkspaces {
		workspaces.Label = o.WatchLabelSelector
	} else if o.WatchLabelSelector != nil {
		byObject[owns] = cache.ByObject{Label: o.WatchLabelSelector}
	}
	byObject[&magosv1.Workspace{}] = workspaces
	return byObject, nil
}

// selectorString is sel as a flag value, "" for nil.
func selectorString(sel labels.Selector) string {
	if sel == nil {
		return ""
	}
	return sel.String()
}
