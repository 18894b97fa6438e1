package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// Name of the referenced object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// Engine selects the Terraform-compatible binary that runs a Workspace.
// +kubebuilder:validation:Enum=opentofu;terraform
type Engine string

const (
	// EngineOpenTofu runs the OpenTofu binary (tofu).
	EngineOpenTofu Engine = "opentofu"
	// EngineTerraform runs a user-supplied Terraform binary.
	EngineTerraform Engine = "terraform"
)

// TerraformSpec selects the engine and its version, and optionally the
// engine image that delivers that engine to the runner Pod.
// +kubebuilder:validation:XValidation:rule="!has(self.image) || has(self.engine)",message="image needs engine: an engine image delivers one engine, so name it"
type TerraformSpec struct {
	// Engine is the binary family: opentofu (default) or terraform.
	// +optional
	Engine Engine `json:"engine,omitempty"`

	// Version of the engine, a semantic version such as 1.10.6. The runner
	// looks it up in its versions directory.
	// +kubebuilder:validation:Pattern=`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Version string `json:"version,omitempty"`

	// Image is the engine image for this engine (see the run contract in
	// docs/workspaces.md): an init container copies the engine binary from
	// it into the runner Pod. "{version}" in it is replaced with the
	// effective version, e.g. registry.example.com/magos-engine-terraform:{version}.
	// It overrides the controller's --engine-image for this engine; set on
	// a Project's defaults it applies to member Workspaces whose effective
	// engine is this engine.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9][A-Za-z0-9._/:@-]*(\{version\}[A-Za-z0-9._/:@-]*)*$`
	// +optional
	Image string `json:"image,omitempty"`
}

// ApprovalMode says whether a plan that passed policy is applied on its own.
// +kubebuilder:validation:Enum=Auto;Manual
type ApprovalMode string

const (
	// ApprovalAuto applies every plan that passed policy.
	ApprovalAuto ApprovalMode = "Auto"
	// ApprovalManual waits until spec.approvedPlan names the plan.
	ApprovalManual ApprovalMode = "Manual"
)

// DestroyGate says whether the destroy of a Workspace being deleted goes
// through the policy gate and approval.
// +kubebuilder:validation:Enum=Enforce;Skip
type DestroyGate string

const (
	// DestroyGateEnforce plans the destroy (plan -destroy), evaluates the
	// policy gate on that plan, waits for its approval under approval:
	// Manual and then applies exactly that plan.
	DestroyGateEnforce DestroyGate = "Enforce"
	// DestroyGateSkip runs destroy directly, with no plan, policy gate or
	// approval, for teardown environments. It is honoured only where the
	// workspace-controller allows it (--allow-destroy-skip-gate); elsewhere
	// the destroy goes through the gate as with Enforce.
	DestroyGateSkip DestroyGate = "Skip"
)

// DestroySpec says how a destroyOnDelete Workspace destroys its resources.
type DestroySpec struct {
	// Gate is Enforce (the default) or Skip. Defaults to the Project's, then
	// Enforce.
	// +optional
	Gate DestroyGate `json:"gate,omitempty"`
}

// RetrySpec says how a Workspace retries a failed run: after Interval,
// doubled after each further failure for the same revision and inputs up
// to MaxInterval, at most MaxAttempts times (then it stalls with
// RetriesExhausted until the revision, inputs or spec change, or a
// reconcile request). A failure with a stalling reason is never retried.
// +kubebuilder:validation:XValidation:rule="!has(self.interval) || !has(self.maxInterval) || duration(self.interval) <= duration(self.maxInterval)",message="interval must not exceed maxInterval"
type RetrySpec struct {
	// Interval is the wait before the first retry. Defaults to the
	// Project's, then to the controller's --retry-interval (30s).
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:Type=string
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// MaxInterval caps the doubled wait. Defaults to the Project's, then to
	// 16 times Interval.
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:Type=string
	// +optional
	MaxInterval *metav1.Duration `json:"maxInterval,omitempty"`

	// MaxAttempts bounds the runs in a row that may fail for the same
	// revision and inputs, the first one included; unset or 0 retries
	// without bound. Defaults to the Project's.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MaxAttempts *int32 `json:"maxAttempts,omitempty"`
}

// ReconcileRequestAnnotation asks for a reconcile now, Flux's convention:
// set it to a new value (the time, by convention) and the controller acts
// at once (a Workspace plans again even when nothing changed, or retries a
// failed run without waiting), then records the value in
// status.lastHandledReconcileAt.
const ReconcileRequestAnnotation = "reconcile.fluxcd.io/requestedAt"

// UnlockAnnotation, set on a Workspace to the holder shown in
// status.lock.holder, releases a stuck state lock.
const UnlockAnnotation = "magos.dev/unlock"

// StateRestoredAnnotation, set on a Workspace to the Job shown in
// status.erroredState.job once the state was restored, lets runs start
// again.
const StateRestoredAnnotation = "magos.dev/state-restored"

// WorkspaceUIDAnnotation, on the storage Magos keeps without an owner (the
// state and errored-state Secrets, which outlive their Workspace), names
// the UID of the Workspace it was created for. Another Workspace of the
// same name (created later, or by someone else) does not take it over
// unless told to with AdoptStateAnnotation.
const WorkspaceUIDAnnotation = "magos.dev/workspace-uid"

// AdoptStateAnnotation, set on a Workspace to the UID of an existing state
// or errored-state Secret of its name that was not created for it (left by
// a deleted Workspace of that name, or created by hand), makes it the
// Workspace's own: the controller then records the Workspace's UID on it.
// The Secret's UID names that one object, so a Secret put in its place
// later is not taken over.
const AdoptStateAnnotation = "magos.dev/adopt-state"

// PlanMode is what a plan was made for.
// +kubebuilder:validation:Enum=Destroy
type PlanMode string

// PlanModeDestroy: a plan that destroys everything in the state (plan
// -destroy), made in spec.mode Destroy and when a destroyOnDelete
// Workspace is deleted. A normal plan has no mode.
const PlanModeDestroy PlanMode = "Destroy"

// RunnerSpec shapes the pods that run plans and applies.
type RunnerSpec struct {
	// ServiceAccountAnnotations are set on the Workspace's runner
	// ServiceAccount, e.g. for workload identity. Plans use them too unless
	// plan is set.
	// +optional
	ServiceAccountAnnotations map[string]string `json:"serviceAccountAnnotations,omitempty"`

	// Plan sets the cloud identity of plan runs (and drift checks) apart
	// from apply's. Plans always run as their own ServiceAccount
	// (magos-plan-runner-<workspace>), which can read the state and take the
	// lock but cannot write the state or outputs Secrets; while plan is
	// unset it carries the apply annotations.
	// +optional
	Plan *PlanRunnerSpec `json:"plan,omitempty"`

	// Image of the runner container; defaults to the controller's setting.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// Resources of the runner container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// NodeSelector of the runner pod. Its keys must match the cluster's
	// --allowed-runner-node-label-keys (none by default).
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations of the runner pod. Their keys must match the cluster's
	// --allowed-runner-toleration-keys (none by default).
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Timeout is the deadline of one run (the Job's activeDeadlineSeconds),
	// at least one second.
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="must be at least 1s: a run's deadline is counted in whole seconds and 0 means none"
	// +optional
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// Env are extra environment variables of the runner container (and so
	// of the engine): a literal value or valueFrom a Secret or ConfigMap key
	// (read by the kubelet; values from Secrets are masked in runner
	// output). Reserved names are refused as in VariableSet env, and so is
	// outputRef (a dependency's output is a variable: spec.vars). A name
	// also set by a VariableSet or spec.vars stalls the Workspace.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(e, !has(e.valueFrom) || !has(e.valueFrom.outputRef))",message="outputRef is only for a Workspace's spec.vars (it names one of that Workspace's dependencies); runner env reads an outputs Secret with secretKeyRef"
	// +listType=map
	// +listMapKey=name
	// +optional
	Env []EnvEntry `json:"env,omitempty"`

	// Volumes are Secrets or ConfigMaps mounted read-only into the runner
	// container, e.g. a CA bundle or a .netrc.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(v, self.exists_one(w, w.mountPath == v.mountPath))",message="each volume needs its own mountPath"
	// +listType=map
	// +listMapKey=name
	// +optional
	Volumes []RunnerVolume `json:"volumes,omitempty"`

	// CLIConfig is an OpenTofu/Terraform CLI configuration (provider
	// mirrors, registry credentials) the engine reads: mounted read-only,
	// with TF_CLI_CONFIG_FILE pointing at it (over the operator's
	// --runner-env).
	// +optional
	CLIConfig *CLIConfigSpec `json:"cliConfig,omitempty"`

	// PodLabels are added to the runner Pod. Keys under magos.dev/ are
	// refused: Magos's own labels select and account for runs. Keys must
	// match the cluster's --allowed-runner-pod-label-keys (none by default).
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.matches('^([^/]*[.])?magos[.]dev/'))",message="keys under magos.dev/ are reserved for Magos"
	// +optional
	PodLabels map[string]string `json:"podLabels,omitempty"`

	// PodAnnotations are added to the runner Pod, e.g. a service mesh
	// opt-out. Keys under magos.dev/ and annotations that change the
	// container's AppArmor or seccomp profile are refused. Keys must match
	// the cluster's --allowed-runner-pod-annotation-keys (none by default).
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.matches('^([^/]*[.])?magos[.]dev/'))",message="keys under magos.dev/ are reserved for Magos"
	// +kubebuilder:validation:XValidation:rule="self.all(k, !k.startsWith('container.apparmor.security.beta.kubernetes.io/') && !k.startsWith('seccomp.security.alpha.kubernetes.io/'))",message="annotations that change the runner's AppArmor or seccomp profile are refused"
	// +optional
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// Affinity of the runner Pod. Its node keys and topology keys must
	// match the cluster's --allowed-runner-node-label-keys (none by
	// default), and Pod affinity terms select only Pods of its namespace.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// PriorityClassName of the runner Pod. It must match the cluster's
	// --allowed-runner-priority-classes (none by default).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// ImagePullSecrets of the runner Pod: they cover every image it pulls
	// (the runner, the engine image and any init image).
	// +kubebuilder:validation:MaxItems=16
	// +optional
	ImagePullSecrets []LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// SecurityContext sets the IDs the runner Pod runs as, where a cluster
	// policy needs others than the default 65532. The rest of the hardened
	// context (non-root, read-only root filesystem, no capabilities,
	// RuntimeDefault seccomp) is kept.
	// +optional
	SecurityContext *RunnerSecurityContext `json:"securityContext,omitempty"`
}

// PlanRunnerSpec is the identity of a Workspace's plan runs.
type PlanRunnerSpec struct {
	// ServiceAccountAnnotations are set on the plan ServiceAccount instead
	// of runner.serviceAccountAnnotations, e.g. a read-only cloud role for
	// workload identity; none (plan: {}) gives plans no annotations at all.
	// They are checked against the Project's allow-lists like the apply
	// annotations.
	// +optional
	ServiceAccountAnnotations map[string]string `json:"serviceAccountAnnotations,omitempty"`
}

// PolicySpec selects Kyverno ValidatingPolicies that every plan must pass.
type PolicySpec struct {
	// Selector matches the labels of ValidatingPolicy objects.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// Variable is one Terraform input variable.
// +kubebuilder:validation:XValidation:rule="!(has(self.value) && has(self.valueFrom))",message="value and valueFrom are mutually exclusive"
// +kubebuilder:validation:XValidation:rule="!(has(self.value) && has(self.sensitive) && self.sensitive)",message="a sensitive value must come from a Secret (valueFrom.secretKeyRef): a literal would be stored in clear text in this object, in status and in the runner's Job"
type Variable struct {
	// Name of the Terraform variable: a Terraform identifier.
	// +kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_-]*$`
	// +kubebuilder:validation:MaxLength=128
	Name string `json:"name"`

	// Value is a literal, non-secret value.
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	Value *string `json:"value,omitempty"`

	// ValueFrom reads the value from a key of a Secret or ConfigMap in the
	// same namespace. The bytes are read by the kubelet at pod start and are
	// never copied into a Magos object.
	// +optional
	ValueFrom *VariableSource `json:"valueFrom,omitempty"`

	// HCL marks the value as an HCL expression (list, map, number, bool).
	// +optional
	HCL bool `json:"hcl,omitempty"`

	// Sensitive marks the value as secret. Values from Secrets are always
	// treated as sensitive. A literal value cannot be sensitive: put it in
	// a Secret and use valueFrom.
	// +optional
	Sensitive bool `json:"sensitive,omitempty"`
}

// VariableSource names exactly one key of a Secret or ConfigMap, or one
// output of a Workspace this one depends on.
// +kubebuilder:validation:XValidation:rule="(has(self.secretKeyRef) ? 1 : 0) + (has(self.configMapKeyRef) ? 1 : 0) + (has(self.outputRef) ? 1 : 0) == 1",message="exactly one of secretKeyRef, configMapKeyRef or outputRef must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.secretKeyRef) || !has(self.secretKeyRef.name) || !self.secretKeyRef.name.startsWith('tfstate-')",message="secretKeyRef must not name a state or plan Secret (tfstate-*): those hold a Workspace's state"
type VariableSource struct {
	// SecretKeyRef selects a key of a Secret. Secrets Magos keeps for a
	// Workspace (state, errored state, plans, outputs) are refused, except
	// the outputs Secret of a Workspace in spec.dependsOn: state Secret
	// names (tfstate-*) at admission, the others at reconcile by their
	// labels (Stalled, StorageReferenceNotAllowed). Plan Secret names
	// (*-plan-NN) cannot be refused at admission here: the pattern match
	// needs a bound on the name that Kubernetes' SecretKeySelector lacks.
	// +optional
	SecretKeyRef *corev1.SecretKeySelector `json:"secretKeyRef,omitempty"`

	// ConfigMapKeyRef selects a key of a ConfigMap.
	// +optional
	ConfigMapKeyRef *corev1.ConfigMapKeySelector `json:"configMapKeyRef,omitempty"`

	// OutputRef reads an output of a Workspace in spec.dependsOn. The
	// controller renders it as a secretKeyRef on that Workspace's outputs
	// Secret (the kubelet reads the value; Magos copies none), waits until
	// the output is in its status.outputs, and re-plans when the output
	// changes value. Only in a Workspace's spec.vars.
	// +optional
	OutputRef *OutputReference `json:"outputRef,omitempty"`
}

// OutputReference names one output of another Workspace of the namespace.
type OutputReference struct {
	// Workspace is the name of a Workspace in spec.dependsOn.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Workspace string `json:"workspace"`

	// Output is the name of one of its outputs (its status.outputs). A
	// string arrives as is, any other type as JSON, which the engine parses
	// for a variable of a list, map or object type.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	Output string `json:"output"`
}

// RunHistoryLimit bounds the run history kept in status.
const RunHistoryLimit = 10
