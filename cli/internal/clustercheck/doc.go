// Package clustercheck is what `kubectl magos check` reads and judges,
// before and after installing: the Kubernetes version, the kinds served,
// the controllers' Deployments and leader Leases, whether the
// NetworkPolicies let the controllers that download Flux artifacts reach
// source-controller (read from the policies, without sending traffic),
// and, when asked, whether a tenant namespace's runs can pull their
// images. Each check is a view.CheckResult that says what to do when it
// is not ok.
package clustercheck
