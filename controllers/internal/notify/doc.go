// Package notify forwards Magos events to Flux's notification-controller,
// so a Flux Alert can route them to Slack, Teams and other providers.
//
// Events follow Flux's event API (github.com/fluxcd/pkg/apis/event
// v1beta1): metadata keys carry the involved object's API group as a prefix
// (magos.dev/revision, magos.dev/planID), which is what the
// notification-controller keeps and shows. A Recorder records each event as
// a Kubernetes event, as before, and hands it to a Forwarder, which posts
// it from a bounded queue with retries; a full queue or an unreachable
// receiver drops events and never slows or fails a reconcile.
//
// The controllers never format a secret value into an event message, and
// the forwarder sends nothing else from the object than its reference and
// its event.toolkit.fluxcd.io/ annotations. A RunFailed message carries the
// engine's error text as the runner reported it, which the runner masks
// only for the values it knows as secret (sensitive variables, backend
// credentials) of at least 4 characters; docs/observability.md says what
// holds.
package notify
