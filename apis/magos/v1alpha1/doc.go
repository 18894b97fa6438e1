// Package v1alpha1 holds the magos.dev/v1alpha1 API: Project, Workspace,
// Rollout and VariableSet. It depends only on apimachinery and core API types
// so that clients can import it cheaply.
//
// +kubebuilder:object:generate=true
// +groupName=magos.dev
// +k8s:deepcopy-gen=package
package v1alpha1
