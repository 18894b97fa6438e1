package runqueue

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a settable clock for the queue.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// tick advances the clock so each waiter has its own arrival time.
func (c *clock) tick() { c.t = c.t.Add(time.Second) }

func newQueue(l Limits) (*Queue, *clock, *[]string) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	woken := &[]string{}
	q := &Queue{Limits: l, Now: c.now, Wake: func(keys []string) { *woken = append(*woken, keys...) }}
	return q, c, woken
}

func TestAdmitBoundsTheRunsInProgress(t *testing.T) {
	q, c, _ := newQueue(Limits{Total: 2})
	for _, k := range []string{"a", "b"} {
		require.True(t, q.Admit(k, "", Normal).Admitted, k)
		c.tick()
	}
	v := q.Admit("c", "", Normal)
	assert.False(t, v.Admitted)
	assert.Equal(t, 1, v.Position)
	assert.Equal(t, 1, v.Waiting)
	assert.True(t, q.Admit("a", "", Urgent).Admitted, "a Workspace holding a slot keeps it (its apply after its plan)")
	waiting, running := q.Depth()
	assert.Equal(t, 2, running)
	assert.Equal(t, map[Priority]int{Normal: 1}, waiting)
}

func TestReleaseWakesTheNextWaitersInPriorityOrder(t *testing.T) {
	q, c, woken := newQueue(Limits{Total: 1})
	require.True(t, q.Admit("running", "", Normal).Admitted)
	for _, w := range []struct {
		key string
		p   Priority
	}{{"drift-1", Drift}, {"plan-1", Normal}, {"drift-2", Drift}, {"apply-1", Urgent}, {"plan-2", Normal}} {
		c.tick()
		require.False(t, q.Admit(w.key, "", w.p).Admitted, w.key)
	}
	assert.Equal(t, 4, q.Admit("drift-1", "", Drift).Position, "drift waits behind the apply and the plans")
	assert.Equal(t, 1, q.Admit("apply-1", "", Urgent).Position)

	q.Release("running")
	assert.Equal(t, []string{"apply-1"}, *woken, "the freed slot goes to the urgent run")
	assert.False(t, q.Admit("plan-1", "", Normal).Admitted, "a later waiter cannot take the woken waiter's slot")
	assert.True(t, q.Admit("apply-1", "", Urgent).Admitted)

	var order []string
	for range 4 {
		*woken = nil
		holder := ""
		for k := range q.running {
			holder = k
		}
		q.Release(holder)
		require.Len(t, *woken, 1)
		require.True(t, q.Admit((*woken)[0], "", Normal).Admitted)
		order = append(order, (*woken)[0])
	}
	assert.Equal(t, []string{"plan-1", "plan-2", "drift-1", "drift-2"}, order, "by priority, then by waiting time")
}

// A Workspace whose run ended asks again before its slot is released (its
// next reconcile finds another run due): it keeps the slot for a run that no
// waiter outranks, and otherwise gives it up and waits in line, the freed
// slot waking the waiter above it.
func TestAHeldSlotIsNotKeptForARunThatWaitersOutrank(t *testing.T) {
	for _, tt := range []struct {
		name    string
		limits  Limits
		other   string // the waiter's project
		next    Priority
		keeps   bool
		because string
	}{
		{name: "drift re-plan, a plan of the Project waits", limits: Limits{PerProject: 1}, other: "p", next: Drift, keeps: false,
			because: "a drift re-plan does not start while a plan of its Project waits"},
		{name: "drift re-plan, a plan waits for the controller's bound", limits: Limits{Total: 1}, other: "q", next: Drift, keeps: false,
			because: "the held slot is one of the controller's too"},
		{name: "drift re-plan, a plan of another Project waits for its own bound", limits: Limits{PerProject: 1}, other: "q", next: Drift, keeps: true,
			because: "the other Project's bound holds that plan, not this slot"},
		{name: "apply after its plan", limits: Limits{PerProject: 1}, other: "p", next: Urgent, keeps: true,
			because: "nothing outranks the apply of the plan the slot was taken for"},
		{name: "plan after a plan", limits: Limits{PerProject: 1}, other: "p", next: Normal, keeps: true,
			because: "a waiter of the same priority does not outrank it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q, c, woken := newQueue(tt.limits)
			require.True(t, q.Admit("held", "p", Normal).Admitted)
			if tt.limits.PerProject > 0 && tt.other != "p" {
				require.True(t, q.Admit("busy", tt.other, Normal).Admitted, "fills the other Project")
			}
			c.tick()
			require.False(t, q.Admit("waiter", tt.other, Normal).Admitted)

			v := q.Admit("held", "p", tt.next)
			assert.Equal(t, tt.keeps, v.Admitted, tt.because)
			if tt.keeps {
				assert.Empty(t, *woken)
				return
			}
			assert.Equal(t, []string{"waiter"}, *woken, "the given-up slot wakes the waiter above")
			assert.True(t, q.Admit("waiter", tt.other, Normal).Admitted)
			assert.Equal(t, 1, q.Admit("held", "p", tt.next).Position, "it waits next in line")
		})
	}
}

func TestProjectBoundPassesTheTurnToOtherProjects(t *testing.T) {
	q, c, _ := newQueue(Limits{Total: 3, PerProject: 1})
	require.True(t, q.Admit("p1-a", "p1", Normal).Admitted)
	c.tick()
	v := q.Admit("p1-b", "p1", Urgent)
	assert.False(t, v.Admitted)
	assert.True(t, v.ByProject)
	c.tick()
	assert.True(t, q.Admit("p2-a", "p2", Drift).Admitted, "another Project's run is not held by p1's bound")
	assert.True(t, q.Admit("none", "", Normal).Admitted, "a Workspace without a Project is bounded by the total only")
	c.tick()
	v = q.Admit("p3-a", "p3", Urgent)
	assert.False(t, v.Admitted)
	assert.False(t, v.ByProject, "the controller's bound holds it")
}

func TestHoldCountsRunsFoundInProgressAboveTheBound(t *testing.T) {
	q, _, woken := newQueue(Limits{Total: 1})
	q.Seed([]string{"a", "b"})
	q.Hold("a", "p")
	assert.False(t, q.Admit("c", "", Urgent).Admitted)
	q.Release("a")
	assert.Empty(t, *woken, "b still runs: two runs were in progress for one slot")
	q.Release("b")
	assert.Equal(t, []string{"c"}, *woken)
}

func TestAWokenWaiterThatDoesNotComeBackIsPassedOver(t *testing.T) {
	q, c, woken := newQueue(Limits{Total: 1})
	require.True(t, q.Admit("a", "", Normal).Admitted)
	c.tick()
	require.False(t, q.Admit("gone", "", Urgent).Admitted)
	c.tick()
	require.False(t, q.Admit("b", "", Normal).Admitted)
	q.Release("a")
	require.Equal(t, []string{"gone"}, *woken)
	assert.False(t, q.Admit("b", "", Normal).Admitted)
	c.t = c.t.Add(wokenGrace + time.Second)
	assert.True(t, q.Admit("b", "", Normal).Admitted, "the slot is not held forever for a waiter that never asked again")
}

func TestReleaseOfAWaiterLeavesTheLine(t *testing.T) {
	q, c, woken := newQueue(Limits{Total: 1})
	require.True(t, q.Admit("a", "", Normal).Admitted)
	c.tick()
	require.False(t, q.Admit("b", "", Normal).Admitted)
	c.tick()
	require.False(t, q.Admit("c", "", Normal).Admitted)
	q.Release("b") // b no longer needs a run (e.g. suspended)
	assert.Empty(t, *woken, "no slot was freed")
	assert.Equal(t, 1, q.Admit("c", "", Normal).Position)
}

func TestUnboundedAdmitsEveryone(t *testing.T) {
	q, _, _ := newQueue(Limits{})
	for _, k := range []string{"a", "b", "c", "d"} {
		assert.True(t, q.Admit(k, "p", Drift).Admitted)
	}
}

func TestObserveReportsTheWait(t *testing.T) {
	q, c, _ := newQueue(Limits{Total: 1})
	var waited []time.Duration
	q.Observe = func(_ Priority, d time.Duration) { waited = append(waited, d) }
	require.True(t, q.Admit("a", "", Normal).Admitted)
	require.False(t, q.Admit("b", "", Normal).Admitted)
	c.t = c.t.Add(90 * time.Second)
	q.Release("a")
	require.True(t, q.Admit("b", "", Normal).Admitted)
	assert.Equal(t, []time.Duration{0, 90 * time.Second}, waited)
}
