package reconciletail

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/magos-dev/magos/controllers/internal/notify"
)

// EventBuffer holds the events of one reconcile until its status is
// written. It is an events.EventRecorder, so sub-reconcilers record into it
// as they would into the manager's recorder; it keeps event metadata
// (notify.AnnotatedRecorder) for a recorder that forwards events. The zero
// value is ready to use.
type EventBuffer struct {
	mu     sync.Mutex
	events []bufferedEvent
}

var _ notify.AnnotatedRecorder = (*EventBuffer)(nil)

// bufferedEvent is one recorded event with its note already formatted.
type bufferedEvent struct {
	regarding, related              runtime.Object
	metadata                        map[string]string
	eventType, reason, action, note string
}

// Eventf buffers an event; the note is formatted now, so later changes to
// args do not change it.
func (b *EventBuffer) Eventf(regarding, related runtime.Object, eventType, reason, action, note string, args ...any) {
	b.AnnotatedEventf(regarding, related, nil, eventType, reason, action, note, args...)
}

// AnnotatedEventf buffers an event with metadata (notify.Meta).
func (b *EventBuffer) AnnotatedEventf(regarding, related runtime.Object, metadata map[string]string, eventType, reason, action, note string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = append(b.events, bufferedEvent{
		regarding: regarding, related: related, metadata: metadata,
		eventType: eventType, reason: reason, action: action,
		note: fmt.Sprintf(note, args...),
	})
}

// Len is the number of buffered events.
func (b *EventBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.events)
}

// Flush emits the buffered events to rec in the order they were recorded
// and empties the buffer, with their metadata when rec takes it. A nil rec
// drops them.
func (b *EventBuffer) Flush(rec events.EventRecorder) {
	for _, e := range b.take() {
		notify.Eventf(rec, e.regarding, e.related, e.metadata, e.eventType, e.reason, e.action, "%s", e.note)
	}
}

// Drop discards the buffered events.
func (b *EventBuffer) Drop() { b.take() }

func (b *EventBuffer) take() []bufferedEvent {
	b.mu.Lock()
	defer b.mu.Unlock()
	evs := b.events
	b.events = nil
	return evs
}
