// Package runqueue bounds how many runs a workspace-controller has in
// progress at once, in total, per namespace and per Project, and orders the
// runs that wait for a slot by priority and, within one priority, takes the
// namespaces in turn, so no namespace holds every slot or makes the others
// wait behind its backlog. The namespaces that hold or wait for a slot
// share the slots: while a namespace below its share waits, a freed slot
// goes to it before any namespace at or over its share.
//
// Keys are "namespace/name": the part before the first "/" is the run's
// namespace.
//
// A Workspace holds a slot from the reconcile that starts its run until the
// reconcile that sees it has no run in progress and starts none: a plan
// followed by its apply keeps the slot. The queue is the controller's
// memory only; after a restart the runs in progress take their slots again
// (Seed, Hold), also above the bound, so a restart never starts more runs
// than the bound allows.
package runqueue

import (
	"strings"
	"sync"
	"time"
)

// Priority orders waiting runs: a lower one is admitted first, and within
// one priority the run that waited longest.
type Priority int

// Priorities, highest first.
const (
	// Urgent: applies (admitted by their Rollout or approved) and
	// destroys.
	Urgent Priority = iota
	// Normal: plans of a new revision or new inputs, and plans a person
	// asked for (a reconcile or plan request).
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
	// PerNamespace bounds the runs of the Workspaces of one namespace.
	PerNamespace int
	// PerProject bounds the runs of the Workspaces of one Project;
	// Workspaces without a Project are bounded by Total and PerNamespace
	// only.
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
	// ByNamespace: the namespace's bound holds it; ByProject: the
	// Project's bound does (the controller's may hold it as well); ByShare:
	// its namespace holds its share of the slots while a namespace below
	// its own waits. At most one is set, in that order.
	ByNamespace, ByProject, ByShare bool
}

// wokenGrace is how long a waiter that was told a slot is free keeps its
// place before the walk passes over it (its reconcile may have failed
// before it could ask again).
const wokenGrace = 30 * time.Second

// Queue is safe for concurrent use. Admit and Release cost O(log n) in the
// n waiting runs, plus the waiters they pass over: those given a slot
// before, those held by a full namespace or Project other than the
// asker's, and, while a namespace below its share waits, those of the
// namespaces at their share; plus O(m) in the m namespaces holding or
// waiting for a slot.
//
// Within one priority the line takes the namespaces in turn (start-time
// fair queueing): a waiter's turn is the round being served when it joined
// the line or, if later, the one after its namespace's previous turn in
// that priority (of its last waiter still in line, else of its last one
// admitted); the line is ordered by priority, then turn, then waiting
// time. A namespace
// with a hundred waiting runs thus gets one slot per round like a namespace
// with one, instead of the next hundred.
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

	mu           sync.Mutex
	running      map[string]string // key → project ("" for none)
	perProject   map[string]int    // runs in progress by project
	perNamespace map[string]int    // runs in progress by namespace
	waiting      map[string]*waiter
	waitingNs    map[string]int // waiters by namespace
	line         line
	rounds       [Drift + 1]rounds
}

type waiter struct {
	key, namespace, project string
	priority                Priority
	// turn is the waiter's round among the namespaces (see Queue).
	turn  uint64
	since time.Time
	// woken is when the waiter was last told a slot is free.
	woken time.Time
}

// rounds is the fair order of one priority: the round being served (the
// latest turn admitted) and the turns of each namespace that has waiters
// of the priority or was served a round not yet reached by the others.
// Other namespaces have no entry, so the map holds only the namespaces in
// line and those served last.
type rounds struct {
	serving     uint64
	byNamespace map[string]*turns
}

// turns are one namespace's turns in one priority.
type turns struct {
	// next is the earliest turn of its next waiter; after is one past the
	// latest turn admitted.
	next, after uint64
	waiters     int
}

// join gives w, joining the line at its priority, its turn.
func (r *rounds) join(w *waiter) {
	if r.byNamespace == nil {
		r.byNamespace = map[string]*turns{}
	}
	n := r.byNamespace[w.namespace]
	if n == nil {
		n = &turns{}
		r.byNamespace[w.namespace] = n
	}
	w.turn = max(n.next, r.serving)
	n.next = w.turn + 1
	n.waiters++
}

// served records that w was admitted: its round is being served, and the
// namespaces left behind it lose their entries.
func (r *rounds) served(w *waiter) {
	r.serving = max(r.serving, w.turn)
	if n := r.byNamespace[w.namespace]; n != nil {
		n.after = max(n.after, w.turn+1)
	}
	for ns, n := range r.byNamespace {
		if n.waiters == 0 && n.next <= r.serving {
			delete(r.byNamespace, ns)
		}
	}
}

// part forgets w, leaving the line (after served if admitted). A namespace
// left without waiters takes its next turn after the last it was served,
// not after waiters that left without a slot.
func (r *rounds) part(w *waiter) {
	n := r.byNamespace[w.namespace]
	if n == nil {
		return
	}
	if n.waiters--; n.waiters > 0 {
		return
	}
	n.next = n.after
	if n.next <= r.serving {
		delete(r.byNamespace, w.namespace)
	}
}

// namespaceOf is the namespace of key: the part before its first "/".
func namespaceOf(key string) string {
	ns, _, _ := strings.Cut(key, "/")
	return ns
}

func (q *Queue) now() time.Time {
	if q.Now == nil {
		return time.Now()
	}
	return q.Now()
}

func (q *Queue) init() {
	if q.running == nil {
		q.running, q.perProject, q.perNamespace, q.waiting = map[string]string{}, map[string]int{}, map[string]int{}, map[string]*waiter{}
		q.waitingNs = map[string]int{}
	}
}

// run records key's run in progress under project.
func (q *Queue) run(key, project string) {
	q.end(key)
	q.running[key] = project
	q.perProject[project]++
	q.perNamespace[namespaceOf(key)]++
}

// end forgets key's run in progress; held says whether it had one.
func (q *Queue) end(key string) (held bool) {
	project, held := q.running[key]
	if held {
		delete(q.running, key)
		decrement(q.perProject, project)
		decrement(q.perNamespace, namespaceOf(key))
	}
	return held
}

// decrement counts one run less for k, forgetting k at zero.
func decrement(m map[string]int, k string) {
	if m[k]--; m[k] <= 0 {
		delete(m, k)
	}
}

// leave takes key out of the line; waited says whether it was in it.
func (q *Queue) leave(key string) (waited bool) {
	w, waited := q.waiting[key]
	if waited {
		q.line.remove(w)
		q.rounds[w.priority].part(w)
		delete(q.waiting, key)
		decrement(q.waitingNs, w.namespace)
	}
	return waited
}

// Seed records runs found in progress when the controller started (by
// Workspace key, the project unknown until Hold names it).
func (q *Queue) Seed(keys []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	for _, k := range keys {
		if _, ok := q.running[k]; !ok {
			q.run(k, "")
		}
	}
}

// Hold records that key has a run in progress: it holds a slot, above the
// bound if need be (a run started before a restart or by another replica).
func (q *Queue) Hold(key, project string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	q.run(key, project)
	q.leave(key)
}

// Admit asks for a slot for key's next run. A key that holds one keeps it
// (its apply after its plan) unless a run of a higher priority waits: then
// it gives the slot up and takes its turn in line like any other, the walk
// deciding as for every waiter whether the slot goes to that run (the
// waiters it admits are woken) or back to key. Otherwise key waits in line,
// and is admitted once no waiter before it (by priority, then turn among
// the namespaces, then waiting time) still needs the slot.
func (q *Queue) Admit(key, project string, p Priority) Verdict {
	q.mu.Lock()
	v, wake := q.admit(key, project, p)
	q.mu.Unlock()
	if len(wake) > 0 && q.Wake != nil {
		q.Wake(wake)
	}
	return v
}

func (q *Queue) admit(key, project string, p Priority) (Verdict, []string) {
	q.init()
	now := q.now()
	_, gaveUp := q.running[key]
	if gaveUp && !q.waitingAbove(p) {
		q.run(key, project)
		return Verdict{Admitted: true}, nil
	}
	q.end(key)
	w := q.waiting[key]
	switch {
	case w == nil:
		w = &waiter{key: key, namespace: namespaceOf(key), since: now, priority: p}
		q.waiting[key] = w
		q.waitingNs[w.namespace]++
		q.rounds[p].join(w)
	case w.priority != p:
		q.line.remove(w)
		q.rounds[w.priority].part(w)
		w.priority = p
		q.rounds[p].join(w)
	default:
		q.line.remove(w)
	}
	w.project, w.woken = project, time.Time{}
	q.line.add(w)
	admitted, held := q.turn(now, w)
	v := Verdict{Admitted: true}
	if admitted {
		q.rounds[p].served(w)
		q.leave(key)
		q.run(key, project)
		if q.Observe != nil && !gaveUp {
			q.Observe(p, now.Sub(w.since))
		}
	} else {
		v = Verdict{Position: q.line.rank(w) + 1, Waiting: len(q.waiting), Since: w.since,
			ByNamespace: held == byNamespace, ByProject: held == byProject, ByShare: held == byShare}
	}
	if gaveUp {
		return v, q.admissible(now)
	}
	return v, nil
}

// waitingAbove says whether a run of a higher priority than p waits.
func (q *Queue) waitingAbove(p Priority) bool {
	for _, n := range q.line.count[:p] {
		if n > 0 {
			return true
		}
	}
	return false
}

// Release records that key has no run in progress and starts none: its
// slot (or its place in line) is freed, and the waiters that may take it
// are woken.
func (q *Queue) Release(key string) {
	q.mu.Lock()
	q.init()
	held := q.end(key)
	waited := q.leave(key)
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
	for p, n := range q.line.count {
		if n > 0 {
			waiting[Priority(p)] = n
		}
	}
	return waiting, len(q.running)
}

// walk offers the free slots to the waiters in line: each one that fits
// takes one, one held by its namespace's or Project's bound passes its turn
// to the next. It walks the line twice: first only the waiters of the
// namespaces below their share (fairShare), then every waiter not given a
// slot yet, so a namespace at or over its share gets only the slots no
// namespace below its own can take, and no slot is left free that a
// waiter could take.
// visit sees each waiter with the tally before its turn and says whether to
// go on. A waiter woken more than wokenGrace ago that did not ask again is
// passed over, and the walk ends when no slot is left. It returns the tally
// where it stopped.
func (q *Queue) walk(now time.Time, visit func(w *waiter, t *tally) bool) *tally {
	t := q.newTally()
	given := map[*waiter]bool{}
	stopped := false
	offer := func(w *waiter) bool {
		if !w.woken.IsZero() && now.Sub(w.woken) > wokenGrace {
			return true
		}
		if !visit(w, t) {
			stopped = true
			return false
		}
		if t.fits(w) == nobody {
			t.take(w)
			given[w] = true
		}
		return true
	}
	// The first walk ends once it has seen every waiter of the namespaces
	// below their share when it began.
	if first := t.waitersBelowShare(); first > 0 {
		below := map[string]bool{}
		for ns := range q.waitingNs {
			below[ns] = t.belowShare(ns)
		}
		q.line.each(func(w *waiter) bool {
			if t.free == 0 || first == 0 {
				return false
			}
			if !below[w.namespace] {
				return true
			}
			first--
			if !t.belowShare(w.namespace) {
				return true
			}
			return offer(w)
		})
	}
	if stopped {
		return t
	}
	q.line.each(func(w *waiter) bool {
		if t.free == 0 {
			return false
		}
		if given[w] {
			return true
		}
		return offer(w)
	})
	return t
}

// turn says whether me, in line, is admitted now, and if not which bound
// holds it. The walk stops at me, or before once me's namespace, Project or
// the controller has no slot left for it.
func (q *Queue) turn(now time.Time, me *waiter) (admitted bool, held holder) {
	t := q.walk(now, func(w *waiter, t *tally) bool {
		return w != me && t.boundHolds(me) == nobody
	})
	held = t.fits(me)
	if held == byTotal && !t.belowShare(me.namespace) && t.waitingBelowShare(me.namespace) {
		held = byShare
	}
	return held == nobody, held
}

// admissible is the waiters that would be admitted now; they are marked
// woken.
func (q *Queue) admissible(now time.Time) []string {
	var keys []string
	q.walk(now, func(w *waiter, t *tally) bool {
		if t.fits(w) == nobody {
			w.woken = now
			keys = append(keys, w.key)
		}
		return true
	})
	return keys
}

// fairShare is each namespace's share of total slots among demand
// namespaces (those holding or waiting for a slot): total / demand, rounded
// up; 0 (no share) for an unbounded controller or a single namespace.
func fairShare(total, demand int) int {
	if total <= 0 || demand <= 1 {
		return 0
	}
	return (total + demand - 1) / demand
}

// belowShare says whether a namespace holding held slots is below share
// (0: no share), and so goes first: a namespace holding none always is.
func belowShare(held, share int) bool { return share == 0 || held < share }

// unbounded stands for no bound on the free slots.
const unbounded = -1

// free is the free slots in total: unbounded, or ≥ 0.
func (q *Queue) free() int {
	if q.Limits.Total <= 0 {
		return unbounded
	}
	return max(q.Limits.Total-len(q.running), 0)
}

// holder is the bound that keeps a waiter from a slot.
type holder int

const (
	nobody holder = iota
	byNamespace
	byProject
	byTotal
	// byShare: byTotal, while the waiter's namespace holds its share and
	// a namespace below its own waits.
	byShare
)

// tally is what a walk has left to give: the free slots in total and the
// slots given so far by namespace and by project, and each namespace's
// share of the slots.
type tally struct {
	q                      *Queue
	free                   int
	byNamespace, byProject map[string]int
	share                  int
}

// newTally is the tally at the start of a walk: the namespaces holding or
// waiting for a slot share the controller's.
func (q *Queue) newTally() *tally {
	demand := len(q.perNamespace)
	for ns := range q.waitingNs {
		if q.perNamespace[ns] == 0 {
			demand++
		}
	}
	return &tally{q: q, free: q.free(), byNamespace: map[string]int{}, byProject: map[string]int{},
		share: fairShare(q.Limits.Total, demand)}
}

// holds is the slots namespace ns holds, with those given in this walk.
func (t *tally) holds(ns string) int { return t.q.perNamespace[ns] + t.byNamespace[ns] }

// belowShare says whether namespace ns holds less than its share.
func (t *tally) belowShare(ns string) bool { return belowShare(t.holds(ns), t.share) }

// waitersBelowShare counts the waiters of the namespaces below their
// share, where there is a share.
func (t *tally) waitersBelowShare() int {
	if t.share == 0 {
		return 0
	}
	n := 0
	for ns, w := range t.q.waitingNs {
		if t.belowShare(ns) {
			n += w
		}
	}
	return n
}

// waitingBelowShare says whether a namespace other than ns waits while
// below its share.
func (t *tally) waitingBelowShare(ns string) bool {
	if t.share == 0 {
		return false
	}
	for other := range t.q.waitingNs {
		if other != ns && t.belowShare(other) {
			return true
		}
	}
	return false
}

// boundHolds is the bound of its namespace or Project that leaves w no
// slot, or nobody; the Project's only for a Workspace that has one.
func (t *tally) boundHolds(w *waiter) holder {
	l := t.q.Limits
	switch {
	case l.PerNamespace > 0 && t.q.perNamespace[w.namespace]+t.byNamespace[w.namespace] >= l.PerNamespace:
		return byNamespace
	case w.project != "" && l.PerProject > 0 && t.q.perProject[w.project]+t.byProject[w.project] >= l.PerProject:
		return byProject
	}
	return nobody
}

// fits says which bound keeps w from a slot: its namespace's or Project's
// (whatever the controller's says), else the controller's, else nobody.
func (t *tally) fits(w *waiter) holder {
	if h := t.boundHolds(w); h != nobody {
		return h
	}
	if t.free == 0 {
		return byTotal
	}
	return nobody
}

// take gives w a slot.
func (t *tally) take(w *waiter) {
	if t.free != unbounded {
		t.free--
	}
	t.byNamespace[w.namespace]++
	t.byProject[w.project]++
}
