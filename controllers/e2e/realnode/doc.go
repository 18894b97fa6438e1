// Package realnode is the real-node test tier: tests that run on a real
// single-node cluster (tools/harness/realnode) with kube-controller-manager,
// kube-scheduler, a kubelet, containerd and runc, so that what the local
// executor only imitates — security contexts, the job controller, TTL
// cleanup, garbage collection — is enforced by the real components.
//
// The tests need root; `make test` runs them where it can (see the
// README). Without root they skip on a developer machine and fail under
// CI=true.
package realnode
