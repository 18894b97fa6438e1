// Package artifactproxy serves each run its own Flux artifact, so that
// runner Pods, which run tenants' configuration code, never talk to
// source-controller: its file server is unauthenticated and lists every
// namespace's artifacts.
//
// A runner asks for magosv1.ArtifactProxyPath with a ServiceAccount token
// bound to its Pod and audience magosv1.ArtifactTokenAudience. The proxy
// reviews the token (TokenReview), follows the Pod to the Job that controls
// it and the Job to the Workspace that controls it, checks that the Job's
// artifact (its magos.dev/artifact-url annotation) belongs to that
// Workspace's source, and streams exactly that artifact from
// source-controller, cutting the response when the bytes do not have the
// Job's digest. A request names nothing: what it gets follows from who asks.
package artifactproxy
