// Package artifactproxy serves each run its own Flux artifact, so that
// runner Pods, which run tenants' configuration code, never talk to
// source-controller: its file server is unauthenticated and lists every
// namespace's artifacts.
//
// A runner asks for magosv1.ArtifactProxyPath with a ServiceAccount token
// bound to its Pod and audience magosv1.ArtifactTokenAudience. The proxy
// reviews the token (TokenReview), follows the Pod to the Job that controls
// it and the Job to the Workspace that controls it. What it serves follows
// from what the workspace-controller recorded in that Workspace's status
// when it started the run (status.currentRun: the Job's name and UID, the
// artifact's URL and digest), never from the Job, which anyone who may
// create Jobs in the namespace can make alike; the Pod must run as the
// runner ServiceAccount of the run's phase. The Workspace's source must
// pass the reconciler's guards (config.Guards.CheckSourceNamespace,
// config.CheckProjectSource), and the artifact must be an artifact file of
// that source (<kind>/<namespace>/<name>/<file>.tar.gz) on one of the
// cluster's artifact hosts (artifacthost). The proxy follows no redirect,
// and holds an artifact's last bytes back until it has checked the digest:
// bytes that are not the run's are never delivered whole. A request names
// nothing: what it gets follows from who asks.
package artifactproxy
