// Package progress is the rollout-controller's pure logic: how a source
// revision moves through a Rollout's stages (Stages, from the Facts the
// reconciler read: the revision, each stage's members as MemberOf reads
// them, an abort, the time) and the Rollout's conditions from how a
// reconcile ended (ComputeStatus). It reads no cluster, clock or network
// and links no controller-runtime, client-go or Prometheus; its tables
// test it alone.
package progress
