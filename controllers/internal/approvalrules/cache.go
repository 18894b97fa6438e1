package approvalrules

import (
	"container/list"
	"sync"

	"github.com/magos-dev/magos/apis/plansummary"
)

// lru is a map bounded by its number of entries and by the sum of their
// weights, which evicts the least recently used entries first.
type lru[V any] struct {
	mu                    sync.Mutex
	maxEntries, maxWeight int
	weight                int
	order                 *list.List // of *lruEntry[V], most recent first
	entries               map[string]*list.Element
}

type lruEntry[V any] struct {
	key    string
	value  V
	weight int
}

func newLRU[V any](maxEntries, maxWeight int) *lru[V] {
	return &lru[V]{maxEntries: maxEntries, maxWeight: maxWeight, order: list.New(), entries: map[string]*list.Element{}}
}

func (l *lru[V]) get(key string) (V, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[key]
	if !ok {
		var zero V
		return zero, false
	}
	l.order.MoveToFront(e)
	return e.Value.(*lruEntry[V]).value, true
}

// add keeps value under key, evicting what the bounds need; a value
// heavier than the whole cache is not kept.
func (l *lru[V]) add(key string, value V, weight int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.entries[key]; ok {
		l.remove(e)
	}
	if weight > l.maxWeight {
		return
	}
	l.entries[key] = l.order.PushFront(&lruEntry[V]{key: key, value: value, weight: weight})
	l.weight += weight
	for l.order.Len() > l.maxEntries || l.weight > l.maxWeight {
		l.remove(l.order.Back())
	}
}

func (l *lru[V]) remove(e *list.Element) {
	entry := l.order.Remove(e).(*lruEntry[V])
	delete(l.entries, entry.key)
	l.weight -= entry.weight
}

// Len is the number of entries and their total weight.
func (l *lru[V]) Len() (entries, weight int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len(), l.weight
}

// ResourceCache keeps the changed resources of stored plans, by the
// digest of their whole bundle: a rule naming plan.resources needs the
// plan JSON, and a plan awaiting approval is reviewed on every reconcile.
// A bundle digest names its bytes, so what was read for it stays true.
type ResourceCache struct {
	l *lru[[]plansummary.ResourceChange]
}

// NewResourceCache keeps the resources of at most maxPlans plans and
// maxResources resources in all.
func NewResourceCache(maxPlans, maxResources int) *ResourceCache {
	return &ResourceCache{l: newLRU[[]plansummary.ResourceChange](maxPlans, maxResources)}
}

// Resources are the changed resources of the plan whose bundle has the
// digest bundleDigest: those read for it before, else load's (no-op and
// read-only entries left out), kept unless load fails. Without a digest,
// or with a nil cache, load is called every time. The slice returned is
// shared: read it only.
func (c *ResourceCache) Resources(bundleDigest string, load func() ([]plansummary.ResourceChange, error)) ([]plansummary.ResourceChange, error) {
	if c == nil || bundleDigest == "" {
		return load()
	}
	if rcs, ok := c.l.get(bundleDigest); ok {
		return rcs, nil
	}
	all, err := load()
	if err != nil {
		return nil, err
	}
	changed := make([]plansummary.ResourceChange, 0, len(all))
	for _, rc := range all {
		if rc.Changes() {
			changed = append(changed, rc)
		}
	}
	changed = changed[:len(changed):len(changed)]
	c.l.add(bundleDigest, changed, len(changed)+1)
	return changed, nil
}

// Len is the number of plans kept and of their resources (plus one a plan).
func (c *ResourceCache) Len() (plans, resources int) { return c.l.Len() }
