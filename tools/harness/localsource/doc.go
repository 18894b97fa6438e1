// Package localsource is a stand-in for Flux's source-controller on a
// machine with no cluster: it packages a directory, or a local Git
// repository at a commit, into a deterministic tar.gz artifact, serves it
// over HTTP on the loopback interface and records it in a GitRepository's
// status.artifact (url, revision, digest, size) with Ready=True, as
// source-controller does. Consumers such as the workspace-controller and
// the runner cannot tell the difference.
//
//	src, err := localsource.New(env.Client, localsource.Options{})
//	err = src.Start()
//	defer src.Close()
//	rev, err := src.Publish(ctx, types.NamespacedName{Namespace: ns, Name: "config"}, dir)
//
// Tests can also publish arbitrary bytes with an arbitrary digest
// (PublishArtifact) to check how consumers treat hostile artifacts.
package localsource
