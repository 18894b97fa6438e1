package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VariableSetKind is the kind name of VariableSet.
const VariableSetKind = "VariableSet"

// WholeObjectSource turns every key of a Secret or ConfigMap into a variable.
// +kubebuilder:validation:XValidation:rule="has(self.secretRef) != has(self.configMapRef)",message="exactly one of secretRef or configMapRef must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.secretRef) || !(self.secretRef.name.startsWith('tfstate-') || self.secretRef.name.matches('-plan-[0-9][0-9]+$'))",message="secretRef must not name a state or plan Secret (tfstate-*, *-plan-NN): those hold another run's state and plans"
type WholeObjectSource struct {
	// SecretRef names a Secret; every key becomes a sensitive variable.
	// Secrets Magos keeps for a Workspace are refused (see VariableSource).
	// +optional
	SecretRef *OptionalObjectReference `json:"secretRef,omitempty"`

	// ConfigMapRef names a ConfigMap; every key becomes a variable.
	// +optional
	ConfigMapRef *OptionalObjectReference `json:"configMapRef,omitempty"`

	// HCL marks every value as an HCL expression.
	// +optional
	HCL bool `json:"hcl,omitempty"`
}

// OptionalObjectReference names an object that may be optional.
type OptionalObjectReference struct {
	// Name of the object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Optional lets the set be Ready while the object is missing.
	// +optional
	Optional bool `json:"optional,omitempty"`
}

// EnvEntry is a plain environment variable for the runner, such as
// provider credentials.
// +kubebuilder:validation:XValidation:rule="!(has(self.value) && has(self.valueFrom))",message="value and valueFrom are mutually exclusive"
type EnvEntry struct {
	// Name of the environment variable. Reserved names (see
	// IsReservedEnv: MAGOS_*, TF_HTTP_*, TF_CLI_ARGS*, TF_LOG*,
	// TF_CLI_CONFIG_FILE, TF_DATA_DIR, KUBECONFIG, PATH, ...) are refused.
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!['MAGOS_', 'TF_HTTP_', 'TF_CLI_ARGS', 'TF_LOG'].exists(p, self.startsWith(p)) && !(self in ['TF_CLI_CONFIG_FILE', 'TERRAFORM_CONFIG', 'TF_DATA_DIR', 'TF_PLUGIN_CACHE_DIR', 'TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE', 'TF_WORKSPACE', 'TF_REATTACH_PROVIDERS', 'TF_IN_AUTOMATION', 'TF_INPUT', 'CHECKPOINT_DISABLE', 'KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT', 'HOME', 'PATH', 'LD_PRELOAD', 'LD_LIBRARY_PATH', 'SSL_CERT_FILE', 'SSL_CERT_DIR'])",message="name is reserved: Magos or the engine sets it (MAGOS_*, TF_HTTP_*, TF_CLI_ARGS*, TF_LOG*, TF_CLI_CONFIG_FILE, TF_DATA_DIR, KUBECONFIG, PATH and others)"
	Name string `json:"name"`

	// Value is a literal, non-secret value.
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	Value *string `json:"value,omitempty"`

	// ValueFrom reads the value from a key of a Secret or ConfigMap.
	// +optional
	ValueFrom *VariableSource `json:"valueFrom,omitempty"`
}

// VariableSetSpec is the desired state of a VariableSet.
// +kubebuilder:validation:XValidation:rule="!has(self.variables) || self.variables.all(v, !has(v.valueFrom) || !has(v.valueFrom.outputRef))",message="outputRef is only for a Workspace's spec.vars (it names one of that Workspace's dependencies); a VariableSet reads an outputs Secret with secretKeyRef"
// +kubebuilder:validation:XValidation:rule="!has(self.env) || self.env.all(e, !has(e.valueFrom) || !has(e.valueFrom.outputRef))",message="outputRef is only for a Workspace's spec.vars (it names one of that Workspace's dependencies); a VariableSet reads an outputs Secret with secretKeyRef"
type VariableSetSpec struct {
	// Variables are single Terraform variables.
	// +kubebuilder:validation:MaxItems=512
	// +listType=map
	// +listMapKey=name
	// +optional
	Variables []Variable `json:"variables,omitempty"`

	// From turns whole Secrets or ConfigMaps into variables.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	From []WholeObjectSource `json:"from,omitempty"`

	// Env are plain environment variables for the runner.
	// +kubebuilder:validation:MaxItems=128
	// +listType=map
	// +listMapKey=name
	// +optional
	Env []EnvEntry `json:"env,omitempty"`
}

// ReferenceStatus is the readiness of one referenced object or key.
type ReferenceStatus struct {
	// Kind is Secret or ConfigMap.
	Kind string `json:"kind"`
	// Name of the object.
	Name string `json:"name"`
	// Key inside the object, if one key was referenced.
	// +optional
	Key string `json:"key,omitempty"`
	// Ready is true when the object (and key) exist.
	Ready bool `json:"ready"`
	// Message says what is missing.
	// +optional
	Message string `json:"message,omitempty"`
}

// VariableSetStatus is the observed state of a VariableSet.
type VariableSetStatus struct {
	// ObservedGeneration is the last generation reconciled successfully.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Reconciling, Stalled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Env is the rendered environment, sorted by name: TF_VAR_<name> entries
	// (a literal value, or valueFrom for values read from Secrets and
	// ConfigMaps, never their bytes) and the plain env entries.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// SensitiveEnv names the entries of Env whose value is sensitive: every
	// entry read from a Secret (a variable's or env entry's secretKeyRef, or
	// a key of a whole-Secret source) and every variable marked sensitive,
	// whatever its source. Consumers mask the values of these variables in
	// runner output. Sorted; each name also appears in Env.
	// +listType=set
	// +optional
	SensitiveEnv []string `json:"sensitiveEnv,omitempty"`

	// References lists the readiness of every referenced object and key.
	// +optional
	References []ReferenceStatus `json:"references,omitempty"`

	// InputsDigest changes whenever a referenced object changes; it is built
	// from resourceVersions, never from contents.
	// +optional
	InputsDigest string `json:"inputsDigest,omitempty"`
}

// VariableSet folds Secrets and ConfigMaps into Terraform inputs without
// copying their bytes.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=varset;vs,categories=magos
// +kubebuilder:printcolumn:name="Digest",type=string,JSONPath=`.status.inputsDigest`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VariableSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec VariableSetSpec `json:"spec,omitempty"`
	// A new object reads status.observedGeneration -1 until its controller
	// first writes status, so kstatus (Flux health checks, kubectl wait
	// --for=jsonpath, Argo CD) sees it in progress, never Current before it
	// was reconciled.
	// +kubebuilder:default={observedGeneration:-1}
	Status VariableSetStatus `json:"status,omitempty"`
}

// VariableSetList is a list of VariableSets.
// +kubebuilder:object:root=true
type VariableSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VariableSet `json:"items"`
}

// GetConditions returns the status conditions.
func (in *VariableSet) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the status conditions.
func (in *VariableSet) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }
