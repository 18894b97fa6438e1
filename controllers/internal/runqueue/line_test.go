package runqueue

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLineKeepsAdmissionOrderAndRanks adds, moves and removes waiters at
// random and checks the line against a sorted copy after each change.
func TestLineKeepsAdmissionOrderAndRanks(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var l line
	var all []*waiter
	start := time.Unix(1_700_000_000, 0)
	for i := range 2000 {
		switch {
		case len(all) > 0 && r.IntN(4) == 0:
			j := r.IntN(len(all))
			l.remove(all[j])
			all = slices.Delete(all, j, j+1)
		case len(all) > 0 && r.IntN(4) == 0:
			w := all[r.IntN(len(all))]
			l.remove(w)
			w.priority = Priorities[r.IntN(len(Priorities))]
			l.add(w)
		default:
			w := &waiter{key: fmt.Sprintf("k%04d", i), priority: Priorities[r.IntN(len(Priorities))],
				turn: uint64(r.IntN(5)), since: start.Add(time.Duration(r.IntN(50)) * time.Second)}
			l.add(w)
			all = append(all, w)
		}
		want := append([]*waiter{}, all...)
		slices.SortFunc(want, func(a, b *waiter) int {
			return cmp.Or(cmp.Compare(a.priority, b.priority), cmp.Compare(a.turn, b.turn), a.since.Compare(b.since), cmp.Compare(a.key, b.key))
		})
		got := []*waiter{}
		l.each(func(w *waiter) bool { got = append(got, w); return true })
		require.Equal(t, want, got, "after change %d", i)
		require.Equal(t, len(want), l.len())
		if len(want) > 0 {
			k := r.IntN(len(want))
			require.Equal(t, k, l.rank(want[k]))
		}
	}
	var counts [Drift + 1]int
	for _, w := range all {
		counts[w.priority]++
	}
	assert.Equal(t, counts, l.count)
}

func TestLineEachStopsWhenAsked(t *testing.T) {
	var l line
	for _, k := range []string{"c", "a", "b"} {
		l.add(&waiter{key: k})
	}
	var seen []string
	l.each(func(w *waiter) bool { seen = append(seen, w.key); return w.key != "b" })
	assert.Equal(t, []string{"a", "b"}, seen)
}
