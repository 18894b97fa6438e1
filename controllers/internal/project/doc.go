// Package project holds the project-controller's reconcilers. This release
// registers the shared observing reconciler for Projects: it validates,
// sets observedGeneration and conditions, and does not act yet (Project defaults and roll-ups
// arrive in later releases).
package project
