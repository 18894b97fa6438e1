// Package e2e runs the controller binaries as separate processes against the
// local control plane, the way they run in a cluster.
package e2e
