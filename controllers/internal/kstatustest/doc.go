// Package kstatustest reads Magos objects the way kstatus consumers do
// (Flux health checks, `kubectl wait` scripts, Argo CD and cli-utils
// appliers), so tests assert what those tools will conclude from a status.
// Only tests import it.
package kstatustest
