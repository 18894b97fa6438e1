package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RolloutKind is the kind name of Rollout.
const RolloutKind = "Rollout"

// HaltedCondition is True while a stage of the Rollout is halted by a
// failing Workspace or an abort.
const HaltedCondition = "Halted"

// AbortAnnotation, set on a Rollout to the revision in status.revision,
// stops that revision where it is: no stage is admitted further and
// Workspaces not yet applied keep their old revision. A newer revision
// starts a new rollout as usual.
const AbortAnnotation = "magos.dev/abort"

// PromotionMode says whether a stage is admitted on its own.
// +kubebuilder:validation:Enum=Auto;Manual
type PromotionMode string

const (
	// PromotionAuto admits the stage once the previous one succeeded and baked.
	PromotionAuto PromotionMode = "Auto"
	// PromotionManual also waits for an explicit promotion.
	PromotionManual PromotionMode = "Manual"
)

// Stage is one step of a Rollout.
type Stage struct {
	// Name of the stage, unique within the Rollout.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// Selector picks the Project's Workspaces in this stage by label.
	Selector metav1.LabelSelector `json:"selector"`

	// Promotion is Auto (default) or Manual.
	// +optional
	Promotion PromotionMode `json:"promotion,omitempty"`

	// BakeTime is how long a stage must stay Ready before the next is admitted.
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:Type=string
	// +optional
	BakeTime *metav1.Duration `json:"bakeTime,omitempty"`

	// MaxParallel limits how many Workspaces of the stage apply at once.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxParallel *int32 `json:"maxParallel,omitempty"`
}

// Promotion approves a Manual stage for one revision.
type Promotion struct {
	// Stage to promote.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Stage string `json:"stage"`
	// Revision admitted to the stage.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Revision string `json:"revision"`
}

// RolloutSpec is the desired state of a Rollout.
// +kubebuilder:validation:XValidation:rule="!has(self.promotions) || self.promotions.all(p, self.stages.exists(s, s.name == p.stage))",message="promotions must name existing stages"
type RolloutSpec struct {
	// ProjectRef names the Project whose Workspaces are rolled out.
	ProjectRef LocalObjectReference `json:"projectRef"`

	// Stages in order.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	Stages []Stage `json:"stages"`

	// Suspend pauses admission of further stages.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// Promotions approve Manual stages for a revision.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Promotions []Promotion `json:"promotions,omitempty"`
}

// StagePhase is the state of one stage.
// +kubebuilder:validation:Enum=Pending;Progressing;Baking;WaitingForPromotion;Succeeded;Halted
type StagePhase string

// Stage phases.
const (
	StagePending             StagePhase = "Pending"
	StageProgressing         StagePhase = "Progressing"
	StageBaking              StagePhase = "Baking"
	StageWaitingForPromotion StagePhase = "WaitingForPromotion"
	StageSucceeded           StagePhase = "Succeeded"
	StageHalted              StagePhase = "Halted"
)

// StageWorkspace is one Workspace's state within a stage.
type StageWorkspace struct {
	// Name of the Workspace.
	Name string `json:"name"`
	// AppliedRevision is the last revision the Workspace applied.
	// +optional
	AppliedRevision string `json:"appliedRevision,omitempty"`
	// AppliedAt is when it applied that revision.
	// +optional
	AppliedAt *metav1.Time `json:"appliedAt,omitempty"`
	// Ready mirrors the Workspace's Ready condition.
	Ready bool `json:"ready"`
	// Phase mirrors the Workspace's phase.
	// +optional
	Phase WorkspacePhase `json:"phase,omitempty"`
	// Message explains a failing Workspace.
	// +optional
	Message string `json:"message,omitempty"`
}

// StageStatus is the observed state of one stage.
type StageStatus struct {
	// Name of the stage.
	Name string `json:"name"`
	// Phase of the stage.
	Phase StagePhase `json:"phase"`
	// AdmittedRevision is the revision this stage may apply.
	// +optional
	AdmittedRevision string `json:"admittedRevision,omitempty"`
	// AdmittedWorkspaces may apply now (bounded by maxParallel).
	// +optional
	AdmittedWorkspaces []string `json:"admittedWorkspaces,omitempty"`
	// Workspaces of the stage.
	// +optional
	Workspaces []StageWorkspace `json:"workspaces,omitempty"`
	// Message explains the phase.
	// +optional
	Message string `json:"message,omitempty"`
	// Started is when the stage was admitted.
	// +optional
	Started *metav1.Time `json:"started,omitempty"`
	// Completed is when the stage succeeded.
	// +optional
	Completed *metav1.Time `json:"completed,omitempty"`
}

// RolloutStatus is the observed state of a Rollout.
type RolloutStatus struct {
	// ObservedGeneration is the last generation reconciled successfully.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Reconciling, Stalled, Halted.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Revision being rolled out.
	// +optional
	Revision string `json:"revision,omitempty"`

	// Source is the Flux source the Project's Workspaces read, as
	// Kind/namespace/name; its artifact revision is the one rolled out.
	// +optional
	Source string `json:"source,omitempty"`

	// Stages in spec order.
	// +optional
	Stages []StageStatus `json:"stages,omitempty"`

	// UnstagedWorkspaces are Workspaces of the Project that no stage
	// selects; they do not apply while the Rollout covers their Project.
	// +optional
	UnstagedWorkspaces []string `json:"unstagedWorkspaces,omitempty"`
}

// Rollout promotes a source revision across a Project's Workspaces stage by
// stage. It never runs Terraform and never writes a Workspace.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ro;tfro,categories=magos
// +kubebuilder:printcolumn:name="Project",type=string,JSONPath=`.spec.projectRef.name`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.revision`
// +kubebuilder:printcolumn:name="Halted",type=string,JSONPath=`.status.conditions[?(@.type=="Halted")].status`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Rollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RolloutSpec `json:"spec,omitempty"`
	// A new object reads status.observedGeneration -1 until its controller
	// first writes status, so kstatus (Flux health checks, kubectl wait
	// --for=jsonpath, Argo CD) sees it in progress, never Current before it
	// was reconciled.
	// +kubebuilder:default={observedGeneration:-1}
	Status RolloutStatus `json:"status,omitempty"`
}

// RolloutList is a list of Rollouts.
// +kubebuilder:object:root=true
type RolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Rollout `json:"items"`
}

// GetConditions returns the status conditions.
func (in *Rollout) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the status conditions.
func (in *Rollout) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }
