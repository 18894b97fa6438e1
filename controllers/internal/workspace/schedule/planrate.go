package schedule

import (
	"fmt"
	"sync"
	"time"
)

// PlanRate bounds how many plans each namespace starts per window: every
// plan rewrites its Workspace's plan Secrets (up to --max-plan-chunks of
// them), and etcd keeps each version until it compacts, so a namespace
// that plans without pause (a spec edited every second, many Workspaces
// re-planning) would fill it. A namespace's plan over the rate waits,
// holding no slot, until the oldest plan of the window leaves it. Applies
// and destroys (the plan of a deleted Workspace among them) are not
// counted or held.
type PlanRate struct {
	// max is the plans a namespace may start per window; 0 is no bound.
	max    int
	window time.Duration
	mu     sync.Mutex
	// started holds each namespace's plan starts within the window, oldest
	// first.
	started map[string][]time.Time
}

// NewPlanRate bounds each namespace to max plan starts per window (a
// minute when zero); nil, no bound, when max is not positive.
func NewPlanRate(max int, window time.Duration) *PlanRate {
	if max <= 0 {
		return nil
	}
	if window <= 0 {
		window = time.Minute
	}
	return &PlanRate{max: max, window: window}
}

// wait is how long a plan of namespace ns asking at now must wait; zero
// when it may start.
func (r *PlanRate) wait(ns string, now time.Time) time.Duration {
	if r == nil || r.max <= 0 {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	recent := r.within(ns, now)
	if len(recent) < r.max {
		return 0
	}
	return recent[len(recent)-r.max].Add(r.window).Sub(now)
}

// start records that a plan of namespace ns started at now.
func (r *PlanRate) start(ns string, now time.Time) {
	if r == nil || r.max <= 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started == nil {
		r.started = map[string][]time.Time{}
	}
	r.started[ns] = append(r.within(ns, now), now)
}

// within drops ns's starts that left the window and returns the rest;
// r.mu is held.
func (r *PlanRate) within(ns string, now time.Time) []time.Time {
	s := r.started[ns]
	i := 0
	for i < len(s) && now.Sub(s[i]) >= r.window {
		i++
	}
	s = s[i:]
	if len(s) == 0 {
		delete(r.started, ns)
	} else {
		r.started[ns] = s
	}
	return s
}

// bound says which bound holds a plan over the rate.
func (r *PlanRate) bound() string {
	return fmt.Sprintf("the Workspaces of this namespace started %d plans in the last %s (--max-plans-per-namespace-per-minute), the most they may", r.max, r.window)
}
