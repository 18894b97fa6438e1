package runqueue

import (
	"cmp"
	"math/rand/v2"
)

// line is the waiters in admission order: by priority, then turn among the
// namespaces, then waiting time, then key. It is a treap whose nodes know the size of their subtree, so
// adding, removing and ranking a waiter cost O(log n), and a walk from the
// front costs only the waiters it visits.
type line struct {
	root *node
	// count is the waiters by priority.
	count [Drift + 1]int
}

type node struct {
	w           *waiter
	weight      uint64 // heap order, drawn at random
	size        int    // nodes in this subtree
	left, right *node
}

// before is the admission order; keys are unique, so it is strict.
func before(a, b *waiter) bool {
	return cmp.Or(cmp.Compare(a.priority, b.priority), cmp.Compare(a.turn, b.turn), a.since.Compare(b.since), cmp.Compare(a.key, b.key)) < 0
}

func sizeOf(n *node) int {
	if n == nil {
		return 0
	}
	return n.size
}

func (n *node) resize() { n.size = 1 + sizeOf(n.left) + sizeOf(n.right) }

// len is the number of waiters.
func (l *line) len() int { return sizeOf(l.root) }

// add puts w in its place; w must not be in the line, and its priority,
// turn, since and key must not change until it is removed.
func (l *line) add(w *waiter) {
	front, back := split(l.root, w)
	l.root = merge(merge(front, &node{w: w, weight: rand.Uint64(), size: 1}), back)
	l.count[w.priority]++
}

// remove takes w out of the line.
func (l *line) remove(w *waiter) {
	l.root = removeFrom(l.root, w)
	l.count[w.priority]--
}

// rank is the number of waiters before w.
func (l *line) rank(w *waiter) int {
	r := 0
	for n := l.root; n != nil; {
		switch {
		case n.w == w:
			return r + sizeOf(n.left)
		case before(w, n.w):
			n = n.left
		default:
			r += sizeOf(n.left) + 1
			n = n.right
		}
	}
	return r
}

// each shows visit the waiters in order until it returns false.
func (l *line) each(visit func(*waiter) bool) {
	var stack []*node
	for n := l.root; n != nil || len(stack) > 0; {
		for ; n != nil; n = n.left {
			stack = append(stack, n)
		}
		n, stack = stack[len(stack)-1], stack[:len(stack)-1]
		if !visit(n.w) {
			return
		}
		n = n.right
	}
}

// split parts n into the waiters before w and the others.
func split(n *node, w *waiter) (front, back *node) {
	if n == nil {
		return nil, nil
	}
	if before(n.w, w) {
		n.right, back = split(n.right, w)
		n.resize()
		return n, back
	}
	front, n.left = split(n.left, w)
	n.resize()
	return front, n
}

// merge joins front and back, every waiter of front being before back's.
func merge(front, back *node) *node {
	switch {
	case front == nil:
		return back
	case back == nil:
		return front
	case front.weight > back.weight:
		front.right = merge(front.right, back)
		front.resize()
		return front
	default:
		back.left = merge(front, back.left)
		back.resize()
		return back
	}
}

func removeFrom(n *node, w *waiter) *node {
	switch {
	case n == nil:
		return nil
	case n.w == w:
		return merge(n.left, n.right)
	case before(w, n.w):
		n.left = removeFrom(n.left, w)
	default:
		n.right = removeFrom(n.right, w)
	}
	n.resize()
	return n
}
