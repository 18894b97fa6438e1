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
// Event messages are secret-free (the controllers never format a secret
// value into one), and the forwarder sends nothing else from the object
// than its reference and its event.toolkit.fluxcd.io/ annotations.
package notify
