package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkspaceSetKind is the kind name of WorkspaceSet.
const WorkspaceSetKind = "WorkspaceSet"

// WorkspaceSetLabel names, on each Workspace a WorkspaceSet generated, the
// set (a Rollout's stage may select them by it).
const WorkspaceSetLabel = "magos.dev/workspaceset"

// WorkspaceSetGrantLabelPrefix, followed by a namespace's name, is the
// label an admin puts on a Namespace, with the value "true", to let the
// namespaces generators of the WorkspaceSets in that namespace yield it.
// A set's own namespace needs no grant; no other namespace is revealed
// without one.
const WorkspaceSetGrantLabelPrefix = "workspacesets.magos.dev/"

// DefaultMaxElements bounds the elements of a WorkspaceSet whose
// spec.maxElements is unset.
const DefaultMaxElements = 1000

// WorkspaceSetDeletionPolicy says what happens to a generated Workspace
// whose element is gone.
// +kubebuilder:validation:Enum=Orphan;Delete
type WorkspaceSetDeletionPolicy string

const (
	// DeletionOrphan leaves the Workspace, its state and its resources in
	// place; the set no longer owns it.
	DeletionOrphan WorkspaceSetDeletionPolicy = "Orphan"
	// DeletionDelete deletes the Workspace: with destroyOnDelete, its own
	// gated destroy runs first.
	DeletionDelete WorkspaceSetDeletionPolicy = "Delete"
)

// ListGenerator yields its elements as they are written.
type ListGenerator struct {
	// Elements are the parameter sets, each a map of parameter name to
	// value.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1000
	Elements []map[string]string `json:"elements"`
}

// DirectoriesGenerator yields one element per directory of a source
// artifact that an include glob matches and no exclude glob does.
// Parameters: path (envs/dev/eu), path.basename (eu), and path.N, the
// N-th segment from 0 (path.1: dev).
type DirectoriesGenerator struct {
	// SourceRef names the Flux source whose artifact is read (in the
	// set's namespace unless it names one).
	SourceRef SourceReference `json:"sourceRef"`
	// Include globs (path.Match syntax per segment: envs/*/*).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Include []string `json:"include"`
	// Exclude globs.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Exclude []string `json:"exclude,omitempty"`
}

// NamespacesGenerator yields one element per namespace whose labels match
// the selector and that the set may see: its own namespace, and those an
// admin granted to it with the label workspacesets.magos.dev/NS: "true",
// NS the set's namespace. Parameters: namespace, and namespace.labels.KEY
// for each of its labels but the grants.
type NamespacesGenerator struct {
	// Selector selects the namespaces, among the set's own and those
	// granted to its namespace; empty selects none.
	Selector metav1.LabelSelector `json:"selector"`
}

// WorkspaceSetBaseGenerator is one generator: exactly one field is set.
// +kubebuilder:validation:XValidation:rule="(has(self.list) ? 1 : 0) + (has(self.directories) ? 1 : 0) + (has(self.namespaces) ? 1 : 0) == 1",message="set exactly one of list, directories or namespaces"
type WorkspaceSetBaseGenerator struct {
	// +optional
	List *ListGenerator `json:"list,omitempty"`
	// +optional
	Directories *DirectoriesGenerator `json:"directories,omitempty"`
	// +optional
	Namespaces *NamespacesGenerator `json:"namespaces,omitempty"`
}

// MatrixGenerator yields every combination of its two generators'
// elements, their parameters merged (the second's win on a clash).
type MatrixGenerator struct {
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=2
	Generators []WorkspaceSetBaseGenerator `json:"generators"`
}

// MergeGenerator yields the first generator's elements, each with the
// parameters of the later generators' elements that have the same values
// for every merge key.
type MergeGenerator struct {
	// +kubebuilder:validation:MinItems=2
	// +kubebuilder:validation:MaxItems=4
	Generators []WorkspaceSetBaseGenerator `json:"generators"`
	// MergeKeys are the parameters that identify an element.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	MergeKeys []string `json:"mergeKeys"`
}

// WorkspaceSetGenerator is one generator of a set: a base generator, a
// matrix or a merge. The set's elements are those of all its generators.
// +kubebuilder:validation:XValidation:rule="(has(self.list) ? 1 : 0) + (has(self.directories) ? 1 : 0) + (has(self.namespaces) ? 1 : 0) + (has(self.matrix) ? 1 : 0) + (has(self.merge) ? 1 : 0) == 1",message="set exactly one of list, directories, namespaces, matrix or merge"
type WorkspaceSetGenerator struct {
	// +optional
	List *ListGenerator `json:"list,omitempty"`
	// +optional
	Directories *DirectoriesGenerator `json:"directories,omitempty"`
	// +optional
	Namespaces *NamespacesGenerator `json:"namespaces,omitempty"`
	// +optional
	Matrix *MatrixGenerator `json:"matrix,omitempty"`
	// +optional
	Merge *MergeGenerator `json:"merge,omitempty"`
}

// WorkspaceTemplateMetadata is the generated Workspace's metadata.
type WorkspaceTemplateMetadata struct {
	// Name of the Workspace, usually with parameters ("app-{{env}}"); it
	// must be unique among the set's elements.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// WorkspaceTemplate is a Workspace whose string fields may hold
// parameters: {{name}} is replaced by the element's value of parameter
// name. A parameter no element of the set has is refused.
type WorkspaceTemplate struct {
	Metadata WorkspaceTemplateMetadata `json:"metadata"`
	Spec     WorkspaceSpec             `json:"spec"`
}

// WorkspaceSetSpec is the desired state of a WorkspaceSet.
type WorkspaceSetSpec struct {
	// Generators produce the elements; one Workspace is generated per
	// element.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	Generators []WorkspaceSetGenerator `json:"generators"`

	// Template is the Workspace generated for each element.
	Template WorkspaceTemplate `json:"template"`

	// DeletionPolicy says what happens to the Workspace of an element that
	// is gone, and to every Workspace when the set is deleted: Orphan
	// (default) leaves it; Delete deletes it (a destroyOnDelete Workspace
	// runs its own gated destroy first).
	// +kubebuilder:default=Orphan
	// +optional
	DeletionPolicy WorkspaceSetDeletionPolicy `json:"deletionPolicy,omitempty"`

	// MaxElements bounds the elements (default 1000): a set whose
	// generators yield more changes nothing and stalls.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	// +optional
	MaxElements *int32 `json:"maxElements,omitempty"`
}

// WorkspaceSetStatus is the observed state of a WorkspaceSet.
type WorkspaceSetStatus struct {
	// ObservedGeneration is the last generation reconciled.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Reconciling, Stalled.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Elements counts the elements the generators yielded.
	// +optional
	Elements int32 `json:"elements,omitempty"`

	// Workspaces counts the Workspaces the set owns.
	// +optional
	Workspaces int32 `json:"workspaces,omitempty"`

	// Ready counts the owned Workspaces that are Ready.
	// +optional
	Ready int32 `json:"ready,omitempty"`
}

// WorkspaceSet generates Workspaces from lists, the directories of a source
// artifact, namespaces, and their matrices and merges.
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=wss,categories=magos
// +kubebuilder:printcolumn:name="Elements",type=integer,JSONPath=`.status.elements`
// +kubebuilder:printcolumn:name="Workspaces",type=integer,JSONPath=`.status.workspaces`
// +kubebuilder:printcolumn:name="Ready Workspaces",type=integer,JSONPath=`.status.ready`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type WorkspaceSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WorkspaceSetSpec `json:"spec,omitempty"`
	// +kubebuilder:default={observedGeneration:-1}
	Status WorkspaceSetStatus `json:"status,omitempty"`
}

// WorkspaceSetList is a list of WorkspaceSets.
// +kubebuilder:object:root=true
type WorkspaceSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WorkspaceSet `json:"items"`
}

// GetConditions returns the status conditions.
func (in *WorkspaceSet) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the status conditions.
func (in *WorkspaceSet) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }
