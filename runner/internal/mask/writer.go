package mask

import (
	"bytes"
	"io"
	"sync"
)

// Writer masks a stream. It passes complete lines through as soon as they
// arrive and holds back at most the last len(longest secret)-1 bytes of a
// partial line until more output or Close, so a secret split across writes
// is still replaced and a line without a newline is never held for long.
// When a secret spans lines, the hold-back rule alone applies. It is safe
// for concurrent use.
type Writer struct {
	mu      sync.Mutex
	m       *Masker
	dst     io.Writer
	pending []byte
}

// NewWriter returns a Writer that writes the masked stream to dst.
func (m *Masker) NewWriter(dst io.Writer) *Writer {
	return &Writer{m: m, dst: dst}
}

// Add masks values too from now on (a secret the run makes, such as the
// state backend's password).
func (w *Writer) Add(values ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.m = w.m.With(values...)
}

// Write buffers p and writes out whatever can no longer be part of a
// secret. It always reports len(p) unless dst fails.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil || len(w.m.values) == 0 {
		return w.dst.Write(p)
	}
	w.pending = append(w.pending, p...)
	if err := w.flush(w.safeLimit()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes out everything held back. It does not close dst.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flush(len(w.pending))
}

// safeLimit is how many pending bytes can be masked and written now: no
// secret starting before it can still be completed by later writes.
func (w *Writer) safeLimit() int {
	n := len(w.pending)
	// A secret of maxLen bytes that starts before n-maxLen+1 lies wholly
	// inside pending, so everything before that point is decided.
	limit := n - (w.m.maxLen - 1)
	if !w.m.multiline {
		// No secret spans a newline: every complete line is decided.
		if nl := bytes.LastIndexByte(w.pending, '\n'); nl+1 > limit {
			limit = nl + 1
		}
	}
	return max(limit, 0)
}

// flush masks and writes pending[:limit] (extended over a secret straddling
// limit) and keeps the rest.
func (w *Writer) flush(limit int) error {
	if limit == 0 || len(w.pending) == 0 {
		return nil
	}
	out, used := w.m.mask(w.pending, limit)
	w.pending = append(w.pending[:0], w.pending[used:]...)
	_, err := w.dst.Write(out)
	return err
}
