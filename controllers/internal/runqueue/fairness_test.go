package runqueue

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One namespace asking for every slot gets its bound, and a run of another
// namespace still starts at once.
func TestNamespaceBoundLeavesSlotsToOtherNamespaces(t *testing.T) {
	q, c, _ := newQueue(Limits{Total: 20, PerNamespace: 10})
	for i := range 20 {
		v := q.Admit(fmt.Sprintf("ns-a/hang-%02d", i), "", Normal)
		assert.Equal(t, i < 10, v.Admitted, "ns-a run %d", i)
		if !v.Admitted {
			assert.True(t, v.ByNamespace, "ns-a's bound holds run %d", i)
		}
		c.tick()
	}
	_, running := q.Depth()
	assert.Equal(t, 10, running)
	assert.True(t, q.Admit("ns-b/web", "", Drift).Admitted, "ns-a's waiting runs do not hold ns-b's, even a drift re-plan")
	assert.True(t, q.Admit("ns-b/db", "ns-b/p", Normal).Admitted)
}

// The namespace's bound holds with the Project's: whichever is reached
// first keeps the run waiting, and the verdict says which.
func TestNamespaceAndProjectBoundsBothHold(t *testing.T) {
	q, c, _ := newQueue(Limits{Total: 10, PerNamespace: 3, PerProject: 2})
	require.True(t, q.Admit("ns-a/p1", "ns-a/p", Normal).Admitted)
	require.True(t, q.Admit("ns-a/p2", "ns-a/p", Normal).Admitted)
	c.tick()
	v := q.Admit("ns-a/p3", "ns-a/p", Normal)
	assert.False(t, v.Admitted)
	assert.True(t, v.ByProject)
	assert.False(t, v.ByNamespace)
	require.True(t, q.Admit("ns-a/loose", "", Normal).Admitted, "the namespace has a third slot for a Workspace of no Project")
	c.tick()
	v = q.Admit("ns-a/other", "ns-a/q", Urgent)
	assert.False(t, v.Admitted)
	assert.True(t, v.ByNamespace, "the namespace's three slots are taken")
	assert.False(t, v.ByProject)
}

// When slots free up, the waiting namespaces take them in turn: a
// namespace that asked for many runs before the others gets one per round,
// not all of its backlog first.
func TestFreedSlotsGoToTheNamespacesInTurn(t *testing.T) {
	q, c, woken := newQueue(Limits{Total: 2})
	var running []string
	ask := func(key string, p Priority) {
		t.Helper()
		if q.Admit(key, "", p).Admitted {
			running = append(running, key)
		}
		c.tick()
	}
	for i := 1; i <= 5; i++ {
		ask(fmt.Sprintf("ns-a/a%d", i), Normal)
	}
	ask("ns-b/b1", Normal)
	ask("ns-b/b2", Normal)
	ask("ns-c/c1", Normal)
	require.Equal(t, []string{"ns-a/a1", "ns-a/a2"}, running)

	var order []string
	for len(running) > 0 {
		done := running[0]
		running = running[1:]
		*woken = nil
		q.Release(done)
		for _, k := range *woken {
			require.True(t, q.Admit(k, "", Normal).Admitted, k)
			running = append(running, k)
			order = append(order, k)
		}
	}
	assert.Equal(t, []string{"ns-b/b1", "ns-c/c1", "ns-a/a3", "ns-b/b2", "ns-a/a4", "ns-a/a5"}, order,
		"one run of each waiting namespace per round, each namespace's own runs in the order they asked")
	for _, p := range Priorities {
		for ns, n := range q.rounds[p].byNamespace {
			assert.Zero(t, n.waiters, ns)
			assert.Greater(t, n.next, q.rounds[p].serving, "%s: only a namespace served in the last round is remembered", ns)
		}
	}
}

// Priority comes before the namespaces' turns: an apply of a namespace with
// a backlog still goes before the plans of a namespace without one.
func TestPriorityComesBeforeTheNamespacesTurns(t *testing.T) {
	q, c, woken := newQueue(Limits{Total: 1})
	require.True(t, q.Admit("ns-a/running", "", Normal).Admitted)
	for i := range 3 {
		c.tick()
		require.False(t, q.Admit(fmt.Sprintf("ns-a/plan-%d", i), "", Normal).Admitted)
	}
	c.tick()
	require.False(t, q.Admit("ns-b/plan", "", Normal).Admitted)
	c.tick()
	require.False(t, q.Admit("ns-a/apply", "", Urgent).Admitted)
	assert.Equal(t, 1, q.Admit("ns-a/apply", "", Urgent).Position)
	assert.Equal(t, 2, q.Admit("ns-b/plan", "", Normal).Position, "ns-b's plan is next after the apply, ahead of ns-a's backlog")

	q.Release("ns-a/running")
	assert.Equal(t, []string{"ns-a/apply"}, *woken)
}

// A waiter whose priority changes keeps its waiting time and takes the turn
// of its namespace in its new priority.
func TestAWaiterChangingPriorityTakesATurnInItsNewPriority(t *testing.T) {
	q, c, _ := newQueue(Limits{Total: 1})
	require.True(t, q.Admit("ns-c/running", "", Normal).Admitted)
	c.tick()
	first := q.Admit("ns-a/w", "", Drift)
	require.False(t, first.Admitted)
	c.tick()
	require.False(t, q.Admit("ns-b/w", "", Normal).Admitted)
	v := q.Admit("ns-a/w", "", Normal)
	assert.Equal(t, first.Since, v.Since, "it keeps its waiting time")
	assert.Equal(t, 1, v.Position, "within its new priority it waited longest")
	assert.Len(t, q.rounds[Drift].byNamespace, 0, "it left the drift line's turns")
	assert.Len(t, q.rounds[Normal].byNamespace, 3, "ns-a and ns-b wait, ns-c was served")
}

// Runs found in progress after a restart count against their namespace's
// bound before Hold names their Project.
func TestSeededRunsCountAgainstTheirNamespace(t *testing.T) {
	q, _, woken := newQueue(Limits{Total: 10, PerNamespace: 2})
	q.Seed([]string{"ns-a/x", "ns-a/y"})
	v := q.Admit("ns-a/z", "", Urgent)
	assert.False(t, v.Admitted)
	assert.True(t, v.ByNamespace)
	assert.True(t, q.Admit("ns-b/z", "", Drift).Admitted)
	q.Release("ns-a/x")
	assert.Equal(t, []string{"ns-a/z"}, *woken)
}
