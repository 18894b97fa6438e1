package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProjectKind is the kind name of Project.
const ProjectKind = "Project"

// ProjectDefaults are the settings a member Workspace inherits when it does
// not set them itself.
type ProjectDefaults struct {
	// Terraform is the default engine and version.
	// +optional
	Terraform *TerraformSpec `json:"terraform,omitempty"`

	// Runner is the default runner shape.
	// +optional
	Runner *RunnerSpec `json:"runner,omitempty"`

	// Interval is the default drift re-plan interval.
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:Type=string
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// TriggerPaths are globs every member Workspace's plans depend on
	// besides what the controller sees (Workspace spec.triggerPaths, which
	// adds to them).
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self.all(p, !p.startsWith('/') && !p.split('/').exists(e, e == '..'))",message="triggerPaths must be relative and must not contain '..'"
	// +listType=set
	// +optional
	TriggerPaths []string `json:"triggerPaths,omitempty"`

	// ContentSkip is the default of Workspace spec.contentSkip.
	// +optional
	ContentSkip ContentSkip `json:"contentSkip,omitempty"`

	// Approval is the default approval mode. Manual is also a floor: a
	// Workspace of the Project cannot set Auto.
	// +optional
	Approval ApprovalMode `json:"approval,omitempty"`

	// ApprovalRules are the Project's approval rules (Workspace
	// spec.approvalRules), a floor for its Workspaces: a Workspace with
	// rules of its own needs what both ask, and one with approval Auto is
	// reviewed under them all the same.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	ApprovalRules []ApprovalRule `json:"approvalRules,omitempty"`

	// ApprovalMaxAge is the longest approval lifetime of its Workspaces
	// (Workspace spec.approvalMaxAge may set a shorter one).
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:Type=string
	// +optional
	ApprovalMaxAge *metav1.Duration `json:"approvalMaxAge,omitempty"`

	// Destroy is the default of how deleted destroyOnDelete Workspaces
	// destroy their resources.
	// +optional
	Destroy *DestroySpec `json:"destroy,omitempty"`

	// Retry is the default of how failed runs are retried.
	// +optional
	Retry *RetrySpec `json:"retry,omitempty"`
}

// SourceRule allows Flux sources by kind, namespace and name; empty fields
// and "*" match anything.
type SourceRule struct {
	// Kind of the source.
	// +kubebuilder:validation:Enum=GitRepository;OCIRepository;Bucket;ExternalArtifact;"*"
	// +optional
	Kind string `json:"kind,omitempty"`
	// Namespace of the source (glob).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// Name of the source (glob).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Name string `json:"name,omitempty"`
}

// AnnotationRule allows one runner ServiceAccount annotation key with
// restricted values.
type AnnotationRule struct {
	// Key of the annotation, e.g. eks.amazonaws.com/role-arn.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	Key string `json:"key"`
	// Values are glob patterns (Go path.Match: "*" does not match "/");
	// the annotation's value must match one of them, e.g.
	// arn:aws:iam::111122223333:role/team-a-*.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	Values []string `json:"values"`
}

// ProjectSpec is the desired state of a Project.
// +kubebuilder:validation:XValidation:rule="!has(self.allowedServiceAccountAnnotations) || !has(self.allowedServiceAccountAnnotationValues) || self.allowedServiceAccountAnnotationValues.all(r, !(r.key in self.allowedServiceAccountAnnotations))",message="an annotation key is listed in both allowedServiceAccountAnnotations (any value) and allowedServiceAccountAnnotationValues (restricted values); list it in one"
type ProjectSpec struct {
	// VariableSetRefs are shared by every member Workspace, with lower
	// precedence than the Workspace's own.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	VariableSetRefs []LocalObjectReference `json:"variableSetRefs,omitempty"`

	// Defaults for member Workspaces.
	// +optional
	Defaults *ProjectDefaults `json:"defaults,omitempty"`

	// Policy selects ValidatingPolicies for every member Workspace.
	// +optional
	Policy *PolicySpec `json:"policy,omitempty"`

	// SourceAllowList restricts which Flux sources members may use; empty
	// allows sources in the Project's namespace only.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	SourceAllowList []SourceRule `json:"sourceAllowList,omitempty"`

	// AllowedServiceAccountAnnotations lists the annotation keys members may
	// set on their runner ServiceAccount, with any value.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	AllowedServiceAccountAnnotations []string `json:"allowedServiceAccountAnnotations,omitempty"`

	// AllowedServiceAccountAnnotationValues lists annotation keys members
	// may set on their runner ServiceAccount only with the values given,
	// e.g. the workload identity roles a team may assume.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=key
	// +optional
	AllowedServiceAccountAnnotationValues []AnnotationRule `json:"allowedServiceAccountAnnotationValues,omitempty"`

	// ForbiddenRunnerOverrides lists the runner fields (spec.runner.<field>)
	// member Workspaces may not set, "*" for all: they get the Project's
	// defaults.runner for them. A member that sets one stalls
	// (RunnerOverrideForbidden).
	// +kubebuilder:validation:MaxItems=17
	// +listType=set
	// +optional
	ForbiddenRunnerOverrides []RunnerField `json:"forbiddenRunnerOverrides,omitempty"`

	// Members says who decides membership. Referencing (the default): the
	// Workspaces whose spec.projectRef names the Project are members, and a
	// Workspace may name another Project or none. Namespace: the Project
	// claims its namespace, so every Workspace there must name it; one that
	// names another Project or none stalls (ProjectClaimsNamespace), and so
	// does every Workspace of a namespace two Projects claim. A Workspace
	// author can then not leave the Project's rules by editing
	// spec.projectRef.
	// +kubebuilder:validation:Enum=Referencing;Namespace
	// +optional
	Members ProjectMembers `json:"members,omitempty"`
}

// ProjectMembers says how a Project's members are chosen.
type ProjectMembers string

const (
	// MembersReferencing: Workspaces join by naming the Project.
	MembersReferencing ProjectMembers = "Referencing"
	// MembersNamespace: every Workspace of the Project's namespace must
	// name the Project.
	MembersNamespace ProjectMembers = "Namespace"
)

// WorkspaceRollup counts member Workspaces by state: the Workspaces in the
// Project's namespace whose spec.projectRef names it. A Workspace may be
// counted in several of the state counts at once. The counts are optional
// and default to 0, so that a merge patch of the changed counts alone is
// valid on a Project whose roll-up was never written.
type WorkspaceRollup struct {
	// Total is the number of member Workspaces.
	// +kubebuilder:default=0
	// +optional
	Total int32 `json:"total"`
	// Ready counts members whose Ready condition is True.
	// +kubebuilder:default=0
	// +optional
	Ready int32 `json:"ready"`
	// Failed counts members in phase Failed.
	// +kubebuilder:default=0
	// +optional
	Failed int32 `json:"failed"`
	// Drifted counts members whose Drifted condition is True.
	// +kubebuilder:default=0
	// +optional
	Drifted int32 `json:"drifted"`
	// AwaitingApproval counts members in phase AwaitingApproval.
	// +kubebuilder:default=0
	// +optional
	AwaitingApproval int32 `json:"awaitingApproval"`
	// AwaitingPromotion counts members in phase AwaitingPromotion (waiting
	// for a Rollout stage to admit their revision).
	// +kubebuilder:default=0
	// +optional
	AwaitingPromotion int32 `json:"awaitingPromotion"`
	// Running counts members with a run in progress (status.currentRun set).
	// +kubebuilder:default=0
	// +optional
	Running int32 `json:"running"`
}

// ProjectStatus is the observed state of a Project.
type ProjectStatus struct {
	// ObservedGeneration is the last generation reconciled successfully.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Reconciling, Stalled, and VariableSetsReady (True
	// when every shared VariableSet exists and is Ready; it does not affect
	// Ready).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// VariableSetRefs are the resolved shared variable sets (copied from the
	// spec, in order, even when one is missing or not Ready; the
	// VariableSetsReady condition says which).
	// +optional
	VariableSetRefs []LocalObjectReference `json:"variableSetRefs,omitempty"`

	// Defaults are the resolved defaults the Workspace controller applies.
	// +optional
	Defaults *ProjectDefaults `json:"defaults,omitempty"`

	// PolicySelector is the resolved policy selector.
	// +optional
	PolicySelector *metav1.LabelSelector `json:"policySelector,omitempty"`

	// SourceAllowList is the resolved allow-list; empty allows sources in
	// the Project's namespace only.
	// +optional
	SourceAllowList []SourceRule `json:"sourceAllowList,omitempty"`

	// AllowedServiceAccountAnnotations are the resolved annotation keys
	// members may set on their runner ServiceAccount (copied from the spec).
	// +optional
	AllowedServiceAccountAnnotations []string `json:"allowedServiceAccountAnnotations,omitempty"`

	// AllowedServiceAccountAnnotationValues are the resolved annotation keys
	// members may set only with the listed values (copied from the spec).
	// +optional
	AllowedServiceAccountAnnotationValues []AnnotationRule `json:"allowedServiceAccountAnnotationValues,omitempty"`

	// ForbiddenRunnerOverrides are the resolved runner fields members may
	// not set (copied from the spec).
	// +optional
	ForbiddenRunnerOverrides []RunnerField `json:"forbiddenRunnerOverrides,omitempty"`

	// Workspaces rolls up member Workspaces.
	// +optional
	Workspaces WorkspaceRollup `json:"workspaces,omitempty"`
}

// Project groups Workspaces, gives them shared defaults and is the tenancy
// boundary Rollouts attach to.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=proj,categories=magos
// +kubebuilder:printcolumn:name="Workspaces",type=integer,JSONPath=`.status.workspaces.total`
// +kubebuilder:printcolumn:name="Ready WS",type=integer,JSONPath=`.status.workspaces.ready`
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.workspaces.failed`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Project struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ProjectSpec `json:"spec,omitempty"`
	// A new object reads status.observedGeneration -1 until its controller
	// first writes status, so kstatus (Flux health checks, kubectl wait
	// --for=jsonpath, Argo CD) sees it in progress, never Current before it
	// was reconciled.
	// +kubebuilder:default={observedGeneration:-1}
	Status ProjectStatus `json:"status,omitempty"`
}

// ProjectList is a list of Projects.
// +kubebuilder:object:root=true
type ProjectList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Project `json:"items"`
}

// GetConditions returns the status conditions.
func (in *Project) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the status conditions.
func (in *Project) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }
