package policy

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// slot is the right to use the one policy engine. Evaluations that find it
// taken wait in one queue per namespace, and the namespaces take turns: a
// namespace with many plans waiting gets the slot once, then every other
// namespace that waits gets it once, before its next plan is evaluated. So
// one namespace's plans, or its costly policies, cannot starve another's.
type slot struct {
	mu   sync.Mutex
	busy bool
	// waiting holds each namespace's waiters in arrival order; turns lists
	// the namespaces with waiters, the next to get the slot first.
	waiting map[string][]chan struct{}
	turns   []string
}

// acquire takes the slot for an evaluation in namespace, waiting at most
// wait (no bound when zero) and until ctx ends. On an error the caller holds nothing; the error
// says why it gave up.
func (s *slot) acquire(ctx context.Context, namespace string, wait time.Duration) error {
	s.mu.Lock()
	if !s.busy {
		s.busy = true
		s.mu.Unlock()
		return nil
	}
	granted := make(chan struct{}, 1)
	if s.waiting == nil {
		s.waiting = map[string][]chan struct{}{}
	}
	if len(s.waiting[namespace]) == 0 {
		s.turns = append(s.turns, namespace)
	}
	s.waiting[namespace] = append(s.waiting[namespace], granted)
	s.mu.Unlock()

	var expired <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		expired = t.C
	}
	var err error
	select {
	case <-granted:
		return nil
	case <-expired:
		err = fmt.Errorf("not evaluated: the policy engine was busy with other evaluations for %s", wait)
	case <-ctx.Done():
		err = fmt.Errorf("not evaluated: %w", context.Cause(ctx))
	}
	if !s.leave(namespace, granted) {
		// Granted while giving up: pass the slot on.
		s.release()
	}
	return err
}

// leave takes waiter w out of namespace's queue; false means w was granted
// the slot already.
func (s *slot) leave(namespace string, w chan struct{}) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.waiting[namespace]
	i := indexOf(q, w)
	if i < 0 {
		return false
	}
	q = append(q[:i:i], q[i+1:]...)
	if len(q) > 0 {
		s.waiting[namespace] = q
		return true
	}
	delete(s.waiting, namespace)
	if j := indexOf(s.turns, namespace); j >= 0 {
		s.turns = append(s.turns[:j:j], s.turns[j+1:]...)
	}
	return true
}

// release hands the slot to the first waiter of the namespace whose turn
// it is (the namespace then goes to the back of the turns if more of its
// evaluations wait), or frees it when nobody waits.
func (s *slot) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.turns) == 0 {
		s.busy = false
		return
	}
	ns := s.turns[0]
	s.turns = s.turns[1:]
	q := s.waiting[ns]
	next := q[0]
	if len(q) > 1 {
		s.waiting[ns] = q[1:]
		s.turns = append(s.turns, ns)
	} else {
		delete(s.waiting, ns)
	}
	next <- struct{}{}
}

func indexOf[T comparable](s []T, v T) int {
	for i := range s {
		if s[i] == v {
			return i
		}
	}
	return -1
}
