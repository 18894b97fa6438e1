// Package runqueue bounds how many runs a workspace-controller has in
// progress at once, in total and per Project, and orders the runs that wait
// for a slot by priority.
//
// A Workspace holds a slot from the reconcile that starts its run until the
// reconcile that sees it has no run in progress and starts none: a plan
// followed by its apply keeps the slot. The queue is the controller's
// memory only; after a restart the runs in progress take their slots again
// (Seed, Hold), also above the bound, so a restart never starts more runs
// than the bound allows.
package runqueue

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// Priority orders waiting runs: a lower one is admitted first, and within
// one priority the run that waited longest.
type Priority int

// Priorities, highest first.
const (
	// Urgent: applies (admitted by their Rollout or approved), destroys
	// and runs a person asked for (a reconcile or plan request).
	Urgent Priority = iota
	// Normal: plans of a new revision or new inputs.
	Normal
	// Drift: drift re-plans of an applied Workspace.
	Drift
)

// Priorities lists every priority, highest first.
var Priorities = []Priority{Urgent, Normal, Drift}

func (p Priority) String() string {
	switch p {
	case Urgent:
		return "urgent"
	case Normal:
		return "normal"
	case Drift:
		return "drift"
	}
	return "unknown"
}

// Limits bound the runs in progress; zero is unbounded.
type Limits struct {
	// Total bounds the runs of the controller (one shard).
	Total int
	// PerProject bounds the runs of the Workspaces of one Project;
	// Workspaces without a Project are bounded by Total only.
	PerProject int
}

// Verdict is the queue's answer to a run that asks to start.
type Verdict struct {
	// Admitted: the run may start now.
	Admitted bool
	// Position is the run's place among the waiting runs (1: next), and
	// Waiting how many wait; both 0 when admitted.
	Position, Waiting int
	// Since is when the run started waiting.
	Since time.Time
	// ByProject: the Project's bound, not the controller's, holds it.
	ByProject bool
}

// wokenGrace is how long a waiter that was told a slot is free keeps its
// place before the walk passes over it (its reconcile may have failed
// before it could ask again).
const wokenGrace = 30 * time.Second

// Queue is safe for concurrent use.
type Queue struct {
	// Limits may be changed only before the queue is used.
	Limits Limits
	// Wake is told the keys of waiters that may be admitted now (a slot
	// was freed); it must not block. Nil wakes none.
	Wake func(keys []string)
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Observe, if set, is told each admitted run's priority and wait.
	Observe func(p Priority, waited time.Duration)

	mu      sync.Mutex
	running map[string]string // key → project ("" for none)
	waiting map[string]*waiter
}

type waiter struct {
	key, project string
	priority     Priority
	since        time.Time
	// woken is when the waiter was last told a slot is free.
	woken time.Time
}

func (q *Queue) now() time.Time {
	if q.Now == nil {
		return time.Now()
	}
	return q.Now()
}

func (q *Queue) init() {
	if q.running == nil {
		q.running, q.waiting = map[string]string{}, map[string]*waiter{}
	}
}

// Seed records runs found in progress when the controller started (by
// Workspace key, the project unknown until Hold names it).
func (q *Queue) Seed(keys []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	for _, k := range keys {
		if _, ok := q.running[k]; !ok {
			q.running[k] = ""
		}
	}
}

// Hold records that key has a run in progress: it holds a slot, above the
// bound if need be (a run started before a restart or by another replica).
func (q *Queue) Hold(key, project string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	q.running[key] = project
	delete(q.waiting, key)
}

// Admit asks for a slot for key's next run. A key that holds one keeps it.
// Otherwise key waits in line, and is admitted once no waiter before it
// (by priority, then waiting time) still needs the slot.
func (q *Queue) Admit(key, project string, p Priority) Verdict {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	if _, ok := q.running[key]; ok {
		q.running[key] = project
		return Verdict{Admitted: true}
	}
	now := q.now()
	w := q.waiting[key]
	if w == nil {
		w = &waiter{key: key, since: now}
		q.waiting[key] = w
	}
	w.project, w.priority, w.woken = project, p, time.Time{}
	admitted, position, byProject := q.walk(now, key)
	if admitted {
		delete(q.waiting, key)
		q.running[key] = project
		if q.Observe != nil {
			q.Observe(p, now.Sub(w.since))
		}
		return Verdict{Admitted: true}
	}
	return Verdict{Position: position, Waiting: len(q.waiting), Since: w.since, ByProject: byProject}
}

// Release records that key has no run in progress and starts none: its
// slot (or its place in line) is freed, and the waiters that may take it
// are woken.
func (q *Queue) Release(key string) {
	q.mu.Lock()
	q.init()
	_, held := q.running[key]
	_, waited := q.waiting[key]
	delete(q.running, key)
	delete(q.waiting, key)
	var wake []string
	if held || waited {
		wake = q.admissible(q.now())
	}
	q.mu.Unlock()
	if len(wake) > 0 && q.Wake != nil {
		q.Wake(wake)
	}
}

// Depth is the number of waiting runs by priority and the runs in progress.
func (q *Queue) Depth() (waiting map[Priority]int, running int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	waiting = map[Priority]int{}
	for _, w := range q.waiting {
		waiting[w.priority]++
	}
	return waiting, len(q.running)
}

// ordered is the waiters in admission order.
func (q *Queue) ordered() []*waiter {
	ws := make([]*waiter, 0, len(q.waiting))
	for _, w := range q.waiting {
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(a, b *waiter) int {
		return cmp.Or(cmp.Compare(a.priority, b.priority), a.since.Compare(b.since), cmp.Compare(a.key, b.key))
	})
	return ws
}

// walk goes through the waiters in order, giving each a free slot until
// none is left, and reports whether key gets one, else its position.
// A waiter held by its Project's bound passes its turn to the next; a
// waiter woken more than wokenGrace ago that did not come back is passed
// over.
func (q *Queue) walk(now time.Time, key string) (admitted bool, position int, byProject bool) {
	free, perProject := q.slots()
	for i, w := range q.ordered() {
		if w.key != key && !w.woken.IsZero() && now.Sub(w.woken) > wokenGrace {
			continue
		}
		fits, projectFull := q.fits(w, free, perProject)
		if w.key == key {
			return fits, i + 1, projectFull
		}
		if fits {
			free = take(free)
			perProject[w.project]++
		}
	}
	return false, 0, false
}

// admissible is the waiters that would be admitted now; they are marked
// woken.
func (q *Queue) admissible(now time.Time) []string {
	free, perProject := q.slots()
	var keys []string
	for _, w := range q.ordered() {
		if free == 0 {
			break
		}
		if fits, _ := q.fits(w, free, perProject); fits {
			free = take(free)
			perProject[w.project]++
			w.woken = now
			keys = append(keys, w.key)
		}
	}
	return keys
}

// unbounded stands for no bound on the free slots.
const unbounded = -1

// take is free after one slot is taken.
func take(free int) int {
	if free == unbounded {
		return unbounded
	}
	return free - 1
}

// slots is the free slots in total (unbounded, or ≥ 0) and the runs in
// progress per project.
func (q *Queue) slots() (free int, perProject map[string]int) {
	perProject = map[string]int{}
	for _, p := range q.running {
		perProject[p]++
	}
	if q.Limits.Total <= 0 {
		return unbounded, perProject
	}
	return max(q.Limits.Total-len(q.running), 0), perProject
}

// fits says whether w can take a slot given free and perProject;
// projectFull when its Project's bound is what holds it.
func (q *Queue) fits(w *waiter, free int, perProject map[string]int) (fits, projectFull bool) {
	if free == 0 {
		return false, false
	}
	if w.project != "" && q.Limits.PerProject > 0 && perProject[w.project] >= q.Limits.PerProject {
		return false, true
	}
	return true, false
}
