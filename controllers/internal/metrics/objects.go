package metrics

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// The per-object series are read from the controllers' informer caches at
// scrape time (as kube-state-metrics and cert-manager do): a reconciler
// neither sets nor forgets them, an object that leaves the cache leaves the
// scrape, and only the elected replica of a controller exports its kind.
//
// Cardinality: a Workspace has 2 per-object series in the steady state
// (magos_resource_info and, once it has applied,
// magos_workspace_last_applied_timestamp_seconds) and at most 5 (plus
// drifted, awaiting_since and state_lock_held while those hold), so 10,000
// Workspaces export 20,000 to 50,000 series: well within what one
// Prometheus handles. The controllers export them rather than a
// kube-state-metrics custom-resource configuration, which would need
// another component to run and its own RBAC to list every Magos custom
// resource in the cluster.
var (
	resourceInfo = prometheus.NewDesc("magos_resource_info",
		"Always 1, one series per Magos object, exported by the controller that owns its kind; labels say its Ready status, whether it is stalled or suspended, its phase and its revision.",
		[]string{"kind", "namespace", "name", "ready", "stalled", "suspended", "phase", "revision"}, nil)
	workspacesByPhase = prometheus.NewDesc("magos_workspaces", "Workspaces by phase.", []string{"phase"}, nil)
	stateLocksHeld    = prometheus.NewDesc("magos_workspace_state_locks_held", "Workspaces whose state lock is held by a run that is gone.", nil, nil)
	workspaceDrifted  = prometheus.NewDesc("magos_workspace_drifted",
		"1 while the Workspace's Drifted condition is True; no series otherwise.", []string{"namespace", "name"}, nil)
	workspaceLastApplied = prometheus.NewDesc("magos_workspace_last_applied_timestamp_seconds",
		"Unix time of the Workspace's last successful apply.", []string{"namespace", "name"}, nil)
	workspaceAwaitingSince = prometheus.NewDesc("magos_workspace_awaiting_since_timestamp_seconds",
		"Unix time since when the Workspace's current plan has waited, by reason (AwaitingApproval, AwaitingPromotion); no series when it does not wait.",
		[]string{"namespace", "name", "reason"}, nil)
	workspaceStateLockHeld = prometheus.NewDesc("magos_workspace_state_lock_held",
		"1 while the Workspace's state lock is held by a run that is gone; no series otherwise.", []string{"namespace", "name"}, nil)
	rolloutsHalted = prometheus.NewDesc("magos_rollouts_halted", "Rollouts with a halted stage.", nil, nil)
)

// ObjectSeries is what one object exports.
type ObjectSeries struct {
	Kind, Namespace, Name string
	Conditions            []metav1.Condition
	Info                  ResourceInfo
	// Workspace is a Workspace's own series; nil for other kinds.
	Workspace *WorkspaceState
	// Halted: a Rollout with a halted stage.
	Halted bool
}

// ResourceInfo is what magos_resource_info says of an object besides its
// conditions: phase is "" for a kind without one, revision is the applied
// revision of a Workspace, the admitted revision of a Rollout, else "".
type ResourceInfo struct {
	Suspended bool
	Phase     string
	Revision  string
}

// WorkspaceState is what the per-Workspace series say of one Workspace.
type WorkspaceState struct {
	// Drifted: the Drifted condition is True.
	Drifted bool
	// LastApplied is when the last successful apply finished; zero if none.
	LastApplied time.Time
	// Awaiting is AwaitingApproval or AwaitingPromotion while the current
	// plan waits, since AwaitingSince; "" when it does not wait.
	Awaiting      string
	AwaitingSince time.Time
	// LockHeld: the state lock is held by a run that is gone (status.lock
	// is set).
	LockHeld bool
}

// ObjectLister lists the objects of one kind from a cache, as series.
type ObjectLister func(ctx context.Context, r client.Reader) ([]ObjectSeries, error)

// objectSource is one controller's cache and how to read its kind.
type objectSource struct {
	kind   string
	list   ObjectLister
	reader client.Reader
}

var sources = struct {
	sync.Mutex
	all []*objectSource
}{}

// AddObjectSource makes every scrape export the objects list reads from
// reader, until the returned function is called.
func AddObjectSource(kind string, list ObjectLister, reader client.Reader) (remove func()) {
	s := &objectSource{kind: kind, list: list, reader: reader}
	sources.Lock()
	sources.all = append(sources.all, s)
	sources.Unlock()
	return func() {
		sources.Lock()
		defer sources.Unlock()
		sources.all = slices.DeleteFunc(sources.all, func(o *objectSource) bool { return o == s })
	}
}

// ObjectSource is a manager Runnable: while its manager leads, every scrape
// exports the objects of kind that list reads from reader (the manager's
// cache). A replica that does not lead exports none, so the series are not
// counted twice.
func ObjectSource(kind string, list ObjectLister, reader client.Reader) manager.Runnable {
	return electedSource{kind: kind, list: list, reader: reader}
}

type electedSource objectSource

func (s electedSource) Start(ctx context.Context) error {
	remove := AddObjectSource(s.kind, s.list, s.reader)
	defer remove()
	<-ctx.Done()
	return nil
}

func (electedSource) NeedLeaderElection() bool { return true }

// objectCollector exports the series of every object source.
type objectCollector struct{}

func init() {
	ctrlmetrics.Registry.MustRegister(objectCollector{})
}

func (objectCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{resourceInfo, workspacesByPhase, stateLocksHeld, workspaceDrifted,
		workspaceLastApplied, workspaceAwaitingSince, workspaceStateLockHeld, rolloutsHalted} {
		ch <- d
	}
}

// scrapeTimeout bounds reading the caches for one scrape.
const scrapeTimeout = 10 * time.Second

func (objectCollector) Collect(ch chan<- prometheus.Metric) {
	sources.Lock()
	all := slices.Clone(sources.all)
	sources.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	kinds, seen := map[string]bool{}, map[string]bool{}
	phases := map[string]int{}
	locks, halted := 0, 0
	for _, s := range all {
		objs, err := s.list(ctx, s.reader)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(resourceInfo, err)
			continue
		}
		kinds[s.kind] = true
		for _, o := range objs {
			// Two managers of one process may cache the same object (a
			// restarted manager's source is removed once it stops).
			key := o.Kind + "/" + o.Namespace + "/" + o.Name
			if seen[key] {
				continue
			}
			seen[key] = true
			ch <- gauge(resourceInfo, 1, resourceLabels(o)...)
			if o.Halted {
				halted++
			}
			w := o.Workspace
			if w == nil {
				continue
			}
			if o.Info.Phase != "" {
				phases[o.Info.Phase]++
			}
			collectWorkspace(ch, o.Namespace, o.Name, w)
			if w.LockHeld {
				locks++
			}
		}
	}
	if kinds[magosv1.WorkspaceKind] {
		for phase, n := range phases {
			ch <- gauge(workspacesByPhase, float64(n), phase)
		}
		ch <- gauge(stateLocksHeld, float64(locks))
	}
	if kinds[magosv1.RolloutKind] {
		ch <- gauge(rolloutsHalted, float64(halted))
	}
}

// resourceLabels are o's magos_resource_info labels.
func resourceLabels(o ObjectSeries) []string {
	ready := string(metav1.ConditionUnknown)
	if c := meta.FindStatusCondition(o.Conditions, magosv1.ReadyCondition); c != nil {
		ready = string(c.Status)
	}
	stalled := meta.IsStatusConditionTrue(o.Conditions, magosv1.StalledCondition)
	return []string{o.Kind, o.Namespace, o.Name, ready, strconv.FormatBool(stalled), strconv.FormatBool(o.Info.Suspended), o.Info.Phase, o.Info.Revision}
}

// collectWorkspace exports the per-Workspace series that hold for w.
func collectWorkspace(ch chan<- prometheus.Metric, namespace, name string, w *WorkspaceState) {
	if w.Drifted {
		ch <- gauge(workspaceDrifted, 1, namespace, name)
	}
	if w.LockHeld {
		ch <- gauge(workspaceStateLockHeld, 1, namespace, name)
	}
	if !w.LastApplied.IsZero() {
		ch <- gauge(workspaceLastApplied, unixSeconds(w.LastApplied), namespace, name)
	}
	if w.Awaiting != "" && !w.AwaitingSince.IsZero() {
		ch <- gauge(workspaceAwaitingSince, unixSeconds(w.AwaitingSince), namespace, name, w.Awaiting)
	}
}

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// ConditionSeries is the lister of a kind whose objects export
// magos_resource_info from their conditions alone (Projects, VariableSets):
// newList makes the kind's list.
func ConditionSeries(kind string, newList func() client.ObjectList) ObjectLister {
	return func(ctx context.Context, r client.Reader) ([]ObjectSeries, error) {
		list := newList()
		if err := r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		var out []ObjectSeries
		err := meta.EachListItem(list, func(item runtime.Object) error {
			obj, ok := item.(conditioned)
			if !ok {
				return fmt.Errorf("a %s has no conditions", kind)
			}
			out = append(out, ObjectSeries{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Conditions: obj.GetConditions()})
			return nil
		})
		return out, err
	}
}

type conditioned interface {
	client.Object
	GetConditions() []metav1.Condition
}
