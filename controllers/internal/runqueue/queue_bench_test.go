package runqueue

import (
	"fmt"
	"testing"
)

// drainWaiters is how many runs BenchmarkDrain queues behind the bound.
const drainWaiters = 10_000

// BenchmarkDrain queues 10,000 runs behind a bound of 16 and drains the
// line the way the controller does: each run that ends frees its slot,
// the woken waiter asks again and is admitted. One op is the whole drain.
func BenchmarkDrain(b *testing.B) {
	keys := make([]string, drainWaiters)
	index := make(map[string]int, drainWaiters)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns/ws-%05d", i)
		index[keys[i]] = i
	}
	project := func(i int) string { return fmt.Sprintf("ns/p%d", i%4) }
	for b.Loop() {
		var woken []string
		q := &Queue{Limits: Limits{Total: 16, PerProject: 8}, Wake: func(k []string) { woken = append(woken, k...) }}
		var running []string
		for i, k := range keys {
			if q.Admit(k, project(i), Priorities[i%len(Priorities)]).Admitted {
				running = append(running, k)
			}
		}
		for len(running) > 0 {
			done := running[0]
			running = running[1:]
			woken = woken[:0]
			q.Release(done)
			for _, k := range woken {
				i := index[k]
				if q.Admit(k, project(i), Priorities[i%len(Priorities)]).Admitted {
					running = append(running, k)
				}
			}
		}
		if w, r := q.Depth(); w[Urgent]+w[Normal]+w[Drift] != 0 || r != 0 {
			b.Fatalf("not drained: %v waiting, %d running", w, r)
		}
	}
}
