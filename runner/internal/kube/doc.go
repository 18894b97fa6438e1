// Package kube builds the runner's Kubernetes client with client-go's
// default loading rules: the file named by KUBECONFIG when set, otherwise
// the pod's in-cluster ServiceAccount.
package kube
