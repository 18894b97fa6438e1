// Package setup holds what every Magos controller binary shares: flags,
// zap logging, the manager with leader election, health probes and the
// metrics endpoint. Each binary's main calls Run with its own name and the
// function that registers its reconciler.
package setup
