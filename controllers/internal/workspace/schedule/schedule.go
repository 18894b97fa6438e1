// Package schedule decides when a Workspace's run may start: the run queue
// (runqueue) with its priorities, the namespaces' plan rate and requested
// plan rate, and the jitter of drift re-plans. Its Scheduler wakes the
// Workspaces a freed slot admits.
package schedule

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/metrics"
	"github.com/magos-dev/magos/controllers/internal/runqueue"
	"github.com/magos-dev/magos/controllers/internal/workspace/decide"
	"github.com/magos-dev/magos/controllers/internal/workspace/runjob"
)

// queuedRecheck is how often a queued Workspace looks again on its own; a
// freed slot wakes it sooner.
const queuedRecheck = 5 * time.Minute

// Scheduler admits runs through the run queue and wakes the Workspaces it
// admits. Nil admits every run at once.
type Scheduler struct {
	queue *runqueue.Queue
	// requests rate-limits requested plans per namespace.
	requests *requestLimit
	// plans bounds the plans each namespace starts per window.
	plans *PlanRate
	// wakes carries the Workspaces a freed slot may admit to the controller.
	wakes chan event.TypedGenericEvent[reconcile.Request]
	// seeded takes the runs in progress from the cache once, before the
	// first admission.
	seeded sync.Once
}

// New bounds runs by l, lets each namespace one requested plan at
// normal priority per requestInterval and plans, at most, the plans of
// rate.
func New(l runqueue.Limits, requestInterval time.Duration, rate *PlanRate) *Scheduler {
	s := &Scheduler{wakes: make(chan event.TypedGenericEvent[reconcile.Request], 1024), requests: &requestLimit{interval: requestInterval}, plans: rate}
	s.queue = &runqueue.Queue{Limits: l, Wake: s.wake, Observe: metrics.ObserveRunQueueWait}
	metrics.RegisterRunQueue(s.queue.Depth)
	return s
}

// wake tells the controller to reconcile keys; a full channel drops them
// (queuedRecheck still brings them back).
func (s *Scheduler) wake(keys []string) {
	for _, k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		select {
		case s.wakes <- event.TypedGenericEvent[reconcile.Request]{Object: reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}:
		default:
		}
	}
}

// Source is the controller's watch of the wakes.
func (s *Scheduler) Source() source.TypedSource[reconcile.Request] {
	return source.TypedChannel(s.wakes, handler.TypedFuncs[reconcile.Request, reconcile.Request]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[reconcile.Request], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			q.Add(e.Object)
		},
	})
}

// seed takes the runs in progress from the Jobs in the cache: after a
// restart they hold their slots before anything new is admitted.
func (s *Scheduler) seed(ctx context.Context, c client.Reader) {
	s.seeded.Do(func() {
		var jobs batchv1.JobList
		if err := c.List(ctx, &jobs, client.HasLabels{magosv1.WorkspaceLabel}); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing the runs in progress for the run queue")
			return
		}
		var keys []string
		for i := range jobs.Items {
			job := &jobs.Items[i]
			if done, _ := runjob.Finished(job); !done && job.DeletionTimestamp == nil {
				keys = append(keys, job.Namespace+"/"+job.Labels[magosv1.WorkspaceLabel])
			}
		}
		s.queue.Seed(keys)
	})
}

// Admit asks for a slot for the run d starts: nil when it may start,
// else why it is held (facts.Held), and d is decided again.
func (s *Scheduler) Admit(ctx context.Context, c client.Reader, ws *magosv1.Workspace, d decide.Decision, f decide.Facts) *decide.HeldRun {
	if s == nil {
		return nil
	}
	s.seed(ctx, c)
	counted := magosv1.RunPlans(d.Run.Phase) && f.Deletion == nil
	if counted {
		if wait := s.plans.wait(ws.Namespace, f.Now); wait > 0 {
			ctrl.LoggerFrom(ctx).V(1).Info("Plan waits for the namespace's plan rate", "wait", wait)
			return &decide.HeldRun{After: wait, Bound: s.plans.bound()}
		}
	}
	p := runPriority(d, f)
	var limited time.Duration
	requested := requestedPlan(d, f)
	if requested && s.requests.limited(ws.Namespace, f.Now) {
		p, limited = runqueue.Drift, s.requests.interval
	}
	v := s.queue.Admit(workspaceKey(ws), projectKey(ws), p)
	if v.Admitted {
		if requested && limited == 0 {
			s.requests.admitted(ws.Namespace, f.Now)
		}
		if counted {
			s.plans.start(ws.Namespace, f.Now)
		}
		return nil
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Run queued", "phase", d.Run.Phase, "priority", p.String(), "position", v.Position, "waiting", v.Waiting)
	return &decide.HeldRun{After: queuedRecheck, Priority: p.String(), Bound: queueBound(s.queue.Limits, v), Limited: limited}
}

// Settle tells the queue what the reconcile left: a run in progress holds
// its slot, a queued run keeps its place, anything else frees both.
func (s *Scheduler) Settle(ws *magosv1.Workspace, d decide.Decision) {
	switch {
	case s == nil:
	case ws.Status.CurrentRun != nil && ws.Status.CurrentRun.Result == magosv1.ResultRunning:
		s.queue.Hold(workspaceKey(ws), projectKey(ws))
	case !d.Queued:
		s.queue.Release(workspaceKey(ws))
	}
}

// Forget frees the slot or place of the deleted Workspace key.
func (s *Scheduler) Forget(key string) {
	if s != nil {
		s.queue.Release(key)
	}
}

// runPriority is a run's place in the queue: applies and destroys (a
// deleted Workspace's plan among them) first, drift re-plans last. A plan
// a person asked for is a plan like any other: a tenant's request must not
// put its plans before other tenants' applies (its rate is limited apart,
// requestLimit).
func runPriority(d decide.Decision, f decide.Facts) runqueue.Priority {
	switch {
	case !magosv1.RunPlans(d.Run.Phase), f.Deletion != nil:
		return runqueue.Urgent
	case d.Run.Drift:
		return runqueue.Drift
	}
	return runqueue.Normal
}

// requestedPlan says whether d starts a plan a person asked for (a
// reconcile or plan request) of a Workspace that is not being deleted.
func requestedPlan(d decide.Decision, f decide.Facts) bool {
	return magosv1.RunPlans(d.Run.Phase) && f.Deletion == nil && (d.HandlesRequest || f.Request != nil)
}

// requestLimit lets each namespace one requested plan at normal priority
// per interval; the namespace's other requested plans in the interval wait
// at drift priority, behind every plan that nobody asked for. It holds the
// namespaces whose last requested plan was admitted within the interval.
type requestLimit struct {
	interval time.Duration
	mu       sync.Mutex
	last     map[string]time.Time
}

// limited says whether a requested plan of namespace ns asking at now is
// over the rate.
func (l *requestLimit) limited(ns string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	last, ok := l.last[ns]
	return ok && l.interval > 0 && now.Sub(last) < l.interval
}

// admitted records that a requested plan of namespace ns was admitted at
// normal priority at now, and forgets the namespaces whose interval ended.
func (l *requestLimit) admitted(ns string, now time.Time) {
	if l.interval <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]time.Time{}
	}
	for n, t := range l.last {
		if now.Sub(t) >= l.interval {
			delete(l.last, n)
		}
	}
	l.last[ns] = now
}

// queueBound names the bound that holds a run the queue did not admit
// (verdict v), not its position, which changes with every admission and
// would cost a status write each time.
func queueBound(l runqueue.Limits, v runqueue.Verdict) string {
	switch {
	case v.ByNamespace:
		return fmt.Sprintf("the Workspaces of this namespace run at most %d runs at once (--max-concurrent-runs-per-namespace)", l.PerNamespace)
	case v.ByProject:
		return fmt.Sprintf("the Workspaces of this Project run at most %d runs at once (--max-concurrent-runs-per-project)", l.PerProject)
	case v.ByShare:
		return fmt.Sprintf("the namespaces waiting share this controller's %d runs (--max-concurrent-runs), and this namespace's Workspaces hold their share while another namespace below its own waits", l.Total)
	}
	return fmt.Sprintf("this controller runs at most %d runs at once (--max-concurrent-runs)", l.Total)
}

// JitteredInterval is the drift interval of the plan seeded by seed,
// shortened by up to fraction of it: Workspaces planned at the same moment
// re-plan spread over that part of the interval, and each plan draws again,
// so they drift apart. It is never longer than interval.
func JitteredInterval(interval time.Duration, seed string, fraction float64) time.Duration {
	if interval <= 0 || fraction <= 0 {
		return interval
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	u := float64(h.Sum64()>>11) / (1 << 53)
	return interval - time.Duration(float64(interval)*min(fraction, 1)*u)
}

func workspaceKey(ws *magosv1.Workspace) string { return ws.Namespace + "/" + ws.Name }

// projectKey groups a Workspace's runs under its Project; "" without one.
func projectKey(ws *magosv1.Workspace) string {
	if ws.Spec.ProjectRef == nil {
		return ""
	}
	return ws.Namespace + "/" + ws.Spec.ProjectRef.Name
}
