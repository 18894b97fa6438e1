package executor

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// stopRequest asks a run to end: Reason goes to the Pod's status; with Kill
// the process gets SIGKILL at once, else SIGTERM and SIGKILL after Grace.
type stopRequest struct {
	Reason, Message string
	Kill            bool
	Grace           time.Duration
	// Failed forces the Pod's phase to Failed whatever the exit code.
	Failed bool
}

// run is one Pod's process, from environment resolution to its final
// status.
type run struct {
	pod types.NamespacedName
	uid types.UID
	// job is the Job controlling the Pod; empty for an orphan.
	job types.NamespacedName

	mu       sync.Mutex
	stop     *stopRequest
	stopped  chan struct{} // closed on the first stop request
	escalate chan struct{} // signalled when a later request asks for SIGKILL
	done     chan struct{} // closed once the final status is written
}

func newRun(pod types.NamespacedName, uid types.UID, job types.NamespacedName) *run {
	return &run{pod: pod, uid: uid, job: job, stopped: make(chan struct{}), escalate: make(chan struct{}, 1), done: make(chan struct{})}
}

// requestStop records the first stop request; a later one can only turn a
// graceful stop into a kill.
func (r *run) requestStop(s stopRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop == nil {
		r.stop = &s
		close(r.stopped)
		return
	}
	if s.Kill && !r.stop.Kill {
		r.stop.Kill = true
		select {
		case r.escalate <- struct{}{}:
		default:
		}
	}
}

// stopRequested returns the stop request, if any.
func (r *run) stopRequested() *stopRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stop == nil {
		return nil
	}
	s := *r.stop
	return &s
}

func (r *run) isDone() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// registry holds the runs of one executor, by Pod UID, and the stop
// requests for Pods whose run has not begun.
type registry struct {
	mu      sync.Mutex
	runs    map[types.UID]*run
	pending map[types.UID]stopRequest
	wg      sync.WaitGroup
}

func newRegistry() *registry {
	return &registry{runs: map[types.UID]*run{}, pending: map[types.UID]stopRequest{}}
}

// add registers a run, applying a stop request made before it began.
func (g *registry) add(r *run) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.runs[r.uid] = r
	if s, ok := g.pending[r.uid]; ok {
		delete(g.pending, r.uid)
		r.requestStop(s)
	}
	g.wg.Add(1)
}

// get returns the run of a Pod.
func (g *registry) get(uid types.UID) *run {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.runs[uid]
}

// forget drops a Pod's run and pending stop request.
func (g *registry) forget(uid types.UID) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.runs, uid)
	delete(g.pending, uid)
}

// stopPod stops a Pod's run, or records the request for a run that has not
// begun.
func (g *registry) stopPod(uid types.UID, s stopRequest) {
	g.mu.Lock()
	r := g.runs[uid]
	if r == nil {
		if _, ok := g.pending[uid]; !ok {
			g.pending[uid] = s
		}
	}
	g.mu.Unlock()
	if r != nil {
		r.requestStop(s)
	}
}

// pendingStop returns the stop request recorded for a Pod with no run.
func (g *registry) pendingStop(uid types.UID) (stopRequest, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s, ok := g.pending[uid]
	return s, ok
}

// runningForJob returns the runs of a Job that have not finished.
func (g *registry) runningForJob(job types.NamespacedName) []*run {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*run
	for _, r := range g.runs {
		if r.job == job && !r.isDone() {
			out = append(out, r)
		}
	}
	return out
}

// all returns every run.
func (g *registry) all() []*run {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]*run, 0, len(g.runs))
	for _, r := range g.runs {
		out = append(out, r)
	}
	return out
}
