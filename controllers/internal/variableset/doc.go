// Package variableset holds the variableset-controller's reconcilers. This release
// registers the shared observing reconciler for VariableSets: it validates,
// sets observedGeneration and conditions, and does not act yet (VariableSet rendering
// arrive in later releases).
package variableset
