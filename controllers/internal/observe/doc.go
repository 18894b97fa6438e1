// Package observe is the reconciler every Magos controller starts from: it
// follows the shared skeleton (get, patch base, deferred status patch,
// deletion, suspend, sub-reconcilers) and, for kinds whose execution logic
// has not landed yet, only observes: it sets status.observedGeneration and
// honest kstatus conditions saying the spec was accepted and nothing is
// executed. Controllers with real logic replace it kind by kind.
package observe
