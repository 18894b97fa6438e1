package setup

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// Options are the flags every controller binary accepts.
type Options struct {
	MetricsAddr string
	ProbeAddr   string
	// PprofAddr is where Go's profiles (/debug/pprof/) are served; empty
	// serves none.
	PprofAddr               string
	LeaderElect             bool
	LeaderElectionNamespace string
	LeaseDuration           time.Duration
	RenewDeadline           time.Duration
	RetryPeriod             time.Duration
	Concurrency             int
	// WatchNamespaces are the namespaces the controller watches; empty
	// watches all namespaces.
	WatchNamespaces []string
	// EventsAddr is the event receiver of Flux's notification-controller
	// (e.g. http://notification-controller.flux-system.svc.cluster.local./);
	// empty forwards no events.
	EventsAddr string
	// WatchLabelSelector selects the objects of the controller's own kind
	// it reconciles (its shard); nil selects all. The other kinds it reads
	// are not filtered.
	WatchLabelSelector labels.Selector
	// Shard names the shard for its leader election Lease; empty for an
	// unsharded controller and the default shard.
	Shard string
}

// BindFlags registers the options on fs with their defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8080", "Address the Prometheus metrics endpoint binds to; 0 disables it.")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to.")
	fs.StringVar(&o.PprofAddr, "pprof-bind-address", "", "Address Go's profiles (/debug/pprof/: heap, CPU, goroutines) are served on; empty serves none. Bind it to localhost and reach it with kubectl port-forward.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", true, "Elect a leader so that only one replica reconciles at a time.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", defaultNamespace(), "Namespace of the leader election Lease.")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", 15*time.Second, "Duration non-leaders wait before they try to take the lease.")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", 10*time.Second, "Duration the leader retries refreshing its lease before giving up.")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", 2*time.Second, "Duration between leader election attempts.")
	fs.IntVar(&o.Concurrency, "concurrent", 4, "Number of objects reconciled in parallel.")
	fs.StringVar(&o.EventsAddr, "events-addr", "", "Address of Flux's notification-controller event receiver to forward events to; empty forwards none.")
	fs.Func("watch-label-selector", "Label selector of the objects of the controller's own kind (Workspace, Project, Rollout, VariableSet or WorkspaceSet) it reconciles, e.g. "+
		ShardKeyLabel+"=a for shard a and !"+ShardKeyLabel+" for the default shard; empty reconciles all. The other kinds it reads are not filtered.",
		func(v string) (err error) {
			o.WatchLabelSelector, err = parseWatchLabelSelector(v)
			return err
		})
	fs.StringVar(&o.Shard, "shard", "", "Name of this shard (needs --watch-label-selector): the leader election Lease is magos-<controller>-controller-shard-<shard>. "+
		"Empty keeps magos-<controller>-controller, the Lease of an unsharded controller and of the default shard.")
	addNamespaces := func(v string) error {
		for _, ns := range strings.Split(v, ",") {
			if ns = strings.TrimSpace(ns); ns != "" {
				if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
					return fmt.Errorf("namespace %q: %s", ns, strings.Join(errs, "; "))
				}
				o.WatchNamespaces = append(o.WatchNamespaces, ns)
			}
		}
		return nil
	}
	fs.Func("watch-namespaces", "Comma-separated namespaces to watch (repeatable); empty watches all namespaces. With the chart's rbac.namespaced the controller holds RBAC in these namespaces only.", addNamespaces)
	fs.Func("watch-namespace", "One namespace to watch (the same as --watch-namespaces with one name).", addNamespaces)
}

// CacheNamespaces are the cache's DefaultNamespaces for the watched
// namespaces; nil (all namespaces) when none is set.
func (o Options) CacheNamespaces() map[string]cache.Config {
	if len(o.WatchNamespaces) == 0 {
		return nil
	}
	m := make(map[string]cache.Config, len(o.WatchNamespaces))
	for _, ns := range o.WatchNamespaces {
		m[ns] = cache.Config{}
	}
	return m
}

// defaultNamespace is the pod's namespace when running in a cluster.
func defaultNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "magos-system"
}
