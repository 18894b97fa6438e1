// Package metrics defines the Prometheus metrics every Magos controller
// exports, all prefixed magos_, registered with controller-runtime's registry
// so they are served next to its own on the metrics endpoint.
package metrics
