// Package artifacthost bounds where the controllers download Flux
// artifacts: the storage hosts the cluster admin lists (--artifact-hosts,
// by default source-controller's Service in flux-system). A source's
// status.artifact.url is written by whoever may write the source's status
// (Flux's flux-edit role lets a tenant), so the controllers, which reach
// what runner Pods cannot, fetch from nowhere else and follow no redirect.
// The artifact proxy, the workspace-controller's configuration reads and
// the workspaceset-controller's directories generator all download through
// Hosts.Client.
package artifacthost
