package setup

import (
	"flag"
	"os"
	"time"
)

// Options are the flags every controller binary accepts.
type Options struct {
	MetricsAddr             string
	ProbeAddr               string
	LeaderElect             bool
	LeaderElectionNamespace string
	LeaseDuration           time.Duration
	RenewDeadline           time.Duration
	RetryPeriod             time.Duration
	Concurrency             int
	WatchNamespace          string
}

// BindFlags registers the options on fs with their defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8080", "Address the Prometheus metrics endpoint binds to; 0 disables it.")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "Address the /healthz and /readyz probes bind to.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", true, "Elect a leader so that only one replica reconciles at a time.")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", defaultNamespace(), "Namespace of the leader election Lease.")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", 15*time.Second, "Duration non-leaders wait before they try to take the lease.")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", 10*time.Second, "Duration the leader retries refreshing its lease before giving up.")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", 2*time.Second, "Duration between leader election attempts.")
	fs.IntVar(&o.Concurrency, "concurrent", 4, "Number of objects reconciled in parallel.")
	fs.StringVar(&o.WatchNamespace, "watch-namespace", "", "Namespace to watch; empty watches all namespaces.")
}

// defaultNamespace is the pod's namespace when running in a cluster.
func defaultNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "magos-system"
}
