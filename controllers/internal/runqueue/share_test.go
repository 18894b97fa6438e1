package runqueue

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFairShare: the namespaces that hold or wait for a slot share the
// controller's slots; a namespace below its share is served first, one at
// or over it only with the slots no namespace below its own can take.
func TestFairShare(t *testing.T) {
	for _, tt := range []struct {
		name                string
		total, demand, held int
		share               int
		first               bool
	}{
		{"unbounded: no share", 0, 3, 100, 0, true},
		{"one namespace: no share", 20, 1, 19, 0, true},
		{"two namespaces: half each", 20, 2, 9, 10, true},
		{"two namespaces: at its half", 20, 2, 10, 10, false},
		{"three namespaces: a third, rounded up", 20, 3, 6, 7, true},
		{"three namespaces: at its third", 20, 3, 7, 7, false},
		{"over its share", 20, 3, 10, 7, false},
		{"more namespaces than slots: one each", 4, 9, 0, 1, true},
		{"more namespaces than slots: holding one", 4, 9, 1, 1, false},
		{"a namespace holding nothing is never behind", 1, 1000, 0, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.share, fairShare(tt.total, tt.demand))
			assert.Equal(t, tt.first, belowShare(tt.held, fairShare(tt.total, tt.demand)))
		})
	}
}

// fill asks for n runs of namespace ns and returns those admitted.
func fill(t *testing.T, q *Queue, c *clock, ns string, n int) (admitted []string) {
	t.Helper()
	for i := range n {
		k := fmt.Sprintf("%s/w%02d", ns, i)
		if q.Admit(k, "", Normal).Admitted {
			admitted = append(admitted, k)
		}
		c.tick()
	}
	return admitted
}

// releaseAll ends the runs in order and admits the waiters each release
// wakes, returning the order they were admitted in and the runs still in
// progress.
func releaseAll(t *testing.T, q *Queue, woken *[]string, done []string, project func(string) string) (order []string) {
	t.Helper()
	for _, k := range done {
		*woken = nil
		q.Release(k)
		for _, w := range *woken {
			require.True(t, q.Admit(w, project(w), Normal).Admitted, w)
			order = append(order, w)
		}
	}
	return order
}

func noProject(string) string { return "" }

// Two namespaces that asked first hold every slot (each its half); a third
// that asks then takes every slot they free until it holds its share
// (a third, rounded up): they do not keep the slots by taking turns with
// it.
func TestAWaitingNamespaceTakesFreedSlotsUpToItsShare(t *testing.T) {
	q, c, woken := newQueue(Limits{Total: 6, PerNamespace: 3})
	a := fill(t, q, c, "ns-a", 6)
	b := fill(t, q, c, "ns-b", 6)
	require.Len(t, a, 3)
	require.Len(t, b, 3)
	require.Empty(t, fill(t, q, c, "ns-c", 3))

	order := releaseAll(t, q, woken, []string{a[0], b[0]}, noProject)
	assert.Equal(t, []string{"ns-c/w00", "ns-c/w01"}, order, "ns-c is below its share (2 of 6): the freed slots are its")

	order = releaseAll(t, q, woken, []string{a[1], b[1]}, noProject)
	assert.Equal(t, []string{"ns-a/w03", "ns-b/w03"}, order, "at its share, ns-c takes its turn like the others")
}

// While a namespace below its share waits, one at its share is held, and
// the verdict says so.
func TestANamespaceAtItsShareWaitsForOneBelowIt(t *testing.T) {
	q, c, woken := newQueue(Limits{Total: 4})
	a := fill(t, q, c, "ns-a", 3)
	require.Len(t, a, 3)
	require.True(t, q.Admit("ns-b/x", "", Normal).Admitted)
	c.tick()
	require.False(t, q.Admit("ns-b/y", "", Normal).Admitted)
	c.tick()
	v := q.Admit("ns-a/urgent", "", Urgent)
	require.False(t, v.Admitted)
	assert.True(t, v.ByShare, "ns-a holds 3 of 4 slots while ns-b, holding 1, waits")
	assert.False(t, v.ByNamespace)

	*woken = nil
	q.Release(a[0])
	assert.Equal(t, []string{"ns-b/y"}, *woken, "the freed slot goes to ns-b, below its share, before ns-a's urgent run")
}

// A slot no namespace below its share can take is not left free: a
// namespace over its share takes it.
func TestSlotsNoNamespaceBelowItsShareCanTakeAreNotLeftFree(t *testing.T) {
	q, c, woken := newQueue(Limits{Total: 4, PerProject: 1})
	require.True(t, q.Admit("ns-b/p1", "ns-b/p", Normal).Admitted)
	c.tick()
	a := fill(t, q, c, "ns-a", 5)
	require.Len(t, a, 3)
	require.False(t, q.Admit("ns-b/p2", "ns-b/p", Normal).Admitted)
	*woken = nil
	q.Release(a[0])
	assert.Equal(t, []string{"ns-a/w03"}, *woken, "ns-b is below its share, but its Project's bound holds its waiter: ns-a takes the slot")
}

// The queue with the controller's default bounds: 20 slots, half per
// namespace. Two namespaces with hanging runs hold all 20; a third
// namespace's runs take every slot they free while they are over their
// share (a third of 20, rounded up: 7), not one in three.
func TestTwoNamespacesCannotKeepEverySlot(t *testing.T) {
	q, c, woken := newQueue(Limits{Total: 20, PerNamespace: 10})
	a := fill(t, q, c, "ns-a", 30)
	b := fill(t, q, c, "ns-b", 30)
	require.Len(t, a, 10)
	require.Len(t, b, 10)
	require.Empty(t, fill(t, q, c, "ns-c", 10))

	order := releaseAll(t, q, woken, []string{a[0], b[0], a[1], b[1], a[2], b[2]}, noProject)
	assert.Equal(t, []string{"ns-c/w00", "ns-c/w01", "ns-c/w02", "ns-c/w03", "ns-c/w04", "ns-c/w05"}, order,
		"ns-a and ns-b hold more than their share: ns-c takes every freed slot")
	assert.Equal(t, map[string]int{"ns-a": 7, "ns-b": 7, "ns-c": 6}, q.perNamespace)

	releaseAll(t, q, woken, []string{a[3], b[3], a[4], b[4], "ns-c/w00"}, noProject)
	assert.Equal(t, map[string]int{"ns-a": 7, "ns-b": 7, "ns-c": 6}, q.perNamespace,
		"then each freed slot goes to a namespace below its share, in turn: the shares stay 7, 7 and 6")
}
