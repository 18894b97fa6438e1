// Package rollout holds the rollout-controller's reconcilers. This release
// registers the shared observing reconciler for Rollouts: it validates,
// sets observedGeneration and conditions, and does not act yet (Rollout promotion
// arrive in later releases).
package rollout
