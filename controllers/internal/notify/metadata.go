package notify

import (
	eventv1 "github.com/fluxcd/pkg/apis/event/v1beta1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
)

// Metadata keys of Magos events. The notification-controller keeps only
// keys prefixed with the involved object's API group (or Flux's event
// group) and shows them without the prefix.
const (
	// RevisionKey is the source revision the event is about; Flux's
	// "revision" key, so the notification-controller also rate-limits
	// duplicates per revision.
	RevisionKey = magosv1.GroupName + "/" + eventv1.MetaRevisionKey
	// PlanIDKey is the plan the event is about (planned, approved,
	// applied or failed).
	PlanIDKey = magosv1.GroupName + "/planID"
	// StageKey is the Rollout stage the event is about.
	StageKey = magosv1.GroupName + "/stage"
)

// userMetadataPrefix marks an object's annotations that Flux copies into
// the metadata of every event about the object (e.g.
// event.toolkit.fluxcd.io/cluster: prod).
const userMetadataPrefix = eventv1.Group + "/"

// Meta builds event metadata from key/value pairs, leaving out empty
// values; nil when none is left.
func Meta(keysAndValues ...string) map[string]string {
	var m map[string]string
	for i := 0; i+1 < len(keysAndValues); i += 2 {
		if v := keysAndValues[i+1]; v != "" {
			if m == nil {
				m = map[string]string{}
			}
			m[keysAndValues[i]] = v
		}
	}
	return m
}
