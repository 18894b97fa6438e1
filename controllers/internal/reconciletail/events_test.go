package reconciletail_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"

	"github.com/magos-dev/magos/controllers/internal/notify"
	"github.com/magos-dev/magos/controllers/internal/reconciletail"
)

// metadataRecorder keeps each event's reason and metadata.
type metadataRecorder struct {
	events.EventRecorder
	got []string
}

func (r *metadataRecorder) AnnotatedEventf(_, _ runtime.Object, metadata map[string]string, _, reason, _, note string, args ...any) {
	r.got = append(r.got, fmt.Sprintf("%s %s %v", reason, fmt.Sprintf(note, args...), metadata))
}

func TestEventBufferFlushKeepsMetadata(t *testing.T) {
	ev := &reconciletail.EventBuffer{}
	ev.AnnotatedEventf(variableSet(), nil, notify.Meta(notify.PlanIDKey, "p-1"), corev1.EventTypeNormal, "Planned", "Plan", "plan %s", "p-1")
	ev.Eventf(variableSet(), nil, corev1.EventTypeNormal, "Rendered", "Reconcile", "rendered")

	rec := &metadataRecorder{}
	ev.Flush(rec)

	assert.Equal(t, []string{"Planned plan p-1 map[magos.dev/planID:p-1]", "Rendered rendered map[]"}, rec.got)
}
