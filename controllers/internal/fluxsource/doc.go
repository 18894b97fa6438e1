// Package fluxsource reads Flux sources (GitRepository, OCIRepository,
// Bucket) as unstructured objects: their artifact, a key naming them, and a
// predicate passing artifact changes. The workspace-controller plans their
// artifacts; the rollout-controller rolls out their revisions.
package fluxsource
