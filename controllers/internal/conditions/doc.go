// Package conditions sets kstatus-compatible conditions (Ready, Reconciling,
// Stalled) on Magos objects, so that kubectl wait and Flux health checks read
// them the same way for every kind.
package conditions
