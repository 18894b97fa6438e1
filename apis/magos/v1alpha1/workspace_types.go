package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ContentSkip says whether revisions that change nothing a plan reads are
// carried without a plan.
// +kubebuilder:validation:Enum=Enabled;Disabled
type ContentSkip string

// ContentSkip values.
const (
	ContentSkipEnabled  ContentSkip = "Enabled"
	ContentSkipDisabled ContentSkip = "Disabled"
)

// WorkspaceKind is the kind name of Workspace.
const WorkspaceKind = "Workspace"

// SourceReference points at a Flux source whose artifact holds the config.
type SourceReference struct {
	// Kind of the Flux source: GitRepository, OCIRepository and Bucket are
	// source-controller's; ExternalArtifact is any producer's artifact in
	// Flux's format (e.g. source-watcher's ArtifactGenerator).
	// +kubebuilder:validation:Enum=GitRepository;OCIRepository;Bucket;ExternalArtifact
	Kind string `json:"kind"`

	// Name of the Flux source.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// Namespace of the Flux source; defaults to the Workspace's namespace.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// BackendSpec selects where Terraform state lives.
type BackendSpec struct {
	// SecretRef names a Secret whose key "backend.tf" holds a backend block.
	// Without it, state is kept by the Kubernetes backend in the Workspace's
	// namespace (a state Secret and a lock Lease).
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
}

// OutputsSpec says where Terraform outputs are written.
type OutputsSpec struct {
	// SecretName of the Secret that receives the outputs. The
	// workspace-controller creates it, owned by the Workspace, before the
	// first run; an existing Secret of that name that Magos did not create
	// for this Workspace stalls it (StorageConflict). Names of state and
	// plan Secrets (tfstate-*, *-plan-NN) are refused.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('tfstate-')",message="secretName must not name a state Secret (tfstate-*)"
	// +kubebuilder:validation:XValidation:rule="!self.matches('-plan-[0-9][0-9]+$')",message="secretName must not name a plan Secret (*-plan-NN)"
	SecretName string `json:"secretName"`

	// Names of the outputs to write; empty means all.
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Names []string `json:"names,omitempty"`

	// Readers names the Workspaces of this namespace that may read these
	// outputs (spec.vars[].valueFrom.outputRef, or a secretKeyRef on the
	// outputs Secret, from a Workspace that depends on this one); "*"
	// admits every Workspace of the namespace. Empty admits none: a
	// Workspace that reads them without consent stalls
	// (OutputReadNotAllowed).
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^(\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$`
	// +listType=set
	// +optional
	Readers []string `json:"readers,omitempty"`
}

// Admits says whether Workspace reader may read the outputs
// o writes: its spec.outputs.readers names it or "*".
func (o *OutputsSpec) Admits(reader string) bool {
	if o == nil {
		return false
	}
	for _, r := range o.Readers {
		if r == "*" || r == reader {
			return true
		}
	}
	return false
}

// WorkspaceSpec is the desired state of a Workspace.
// +kubebuilder:validation:XValidation:rule="!(has(self.mode) && self.mode == 'Destroy' && has(self.planRequest) && has(self.planRequest.replace))",message="planRequest.replace cannot be used with mode Destroy"
type WorkspaceSpec struct {
	// SourceRef is the Flux source whose artifact holds the configuration.
	SourceRef SourceReference `json:"sourceRef"`

	// Path of the configuration inside the artifact, relative to its root.
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('/') && !self.split('/').exists(p, p == '..')",message="path must be relative and must not contain '..'"
	// +optional
	Path string `json:"path,omitempty"`

	// TriggerPaths are globs, relative to the artifact's root, of files the
	// plan depends on that the controller cannot see in the configuration
	// (a script a provider runs, a file named by a variable): a revision
	// that changes a matching file is planned, like a change under path.
	// "**" matches any number of directories; other elements are
	// path.Match patterns. Added to the Project's defaults.triggerPaths.
	// See docs/flux.md for what the controller sees by itself.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:XValidation:rule="self.all(p, !p.startsWith('/') && !p.split('/').exists(e, e == '..'))",message="triggerPaths must be relative and must not contain '..'"
	// +listType=set
	// +optional
	TriggerPaths []string `json:"triggerPaths,omitempty"`

	// ContentSkip says whether a new revision that changes none of the bytes
	// the plan can depend on is carried without a plan (Enabled, the
	// default) or planned like any revision (Disabled). Defaults to the
	// Project's.
	// +optional
	ContentSkip ContentSkip `json:"contentSkip,omitempty"`

	// Terraform selects the engine and version; defaults come from the Project.
	// +optional
	Terraform *TerraformSpec `json:"terraform,omitempty"`

	// ProjectRef names the Project this Workspace belongs to.
	// +optional
	ProjectRef *LocalObjectReference `json:"projectRef,omitempty"`

	// DependsOn names Workspaces of this namespace that this one runs
	// after: it plans and applies only while each is Ready (its latest
	// revision applied), and, deleted with destroyOnDelete, it is destroyed
	// before them. A cycle stalls with DependencyCycle.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	DependsOn []LocalObjectReference `json:"dependsOn,omitempty"`

	// VariableSetRefs name VariableSets in this namespace; later ones win.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	VariableSetRefs []LocalObjectReference `json:"variableSetRefs,omitempty"`

	// Vars are inline variables; they take precedence over VariableSets.
	// +kubebuilder:validation:MaxItems=256
	// +listType=map
	// +listMapKey=name
	// +optional
	Vars []Variable `json:"vars,omitempty"`

	// Approval says whether plans are applied on their own (Auto) or only
	// once approved (Manual). Defaults to the Project's, then Auto. A
	// Project whose defaults say Manual, or name approval rules, makes its
	// Workspaces Manual whatever they say.
	// +optional
	Approval ApprovalMode `json:"approval,omitempty"`

	// ApprovedPlan is the plan ID (status.plan.id) approved for apply,
	// without saying by whom (spec.approvals does). It counts as one
	// approval at most, and none next to an entry of spec.approvals: it may
	// be that entry's approver's.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ApprovedPlan string `json:"approvedPlan,omitempty"`

	// Approvals approve plans, each in the name of the user who wrote it
	// (kubectl magos approve): an entry naming status.plan.id and its
	// digest approves the plan, and status.plan.approvals
	// records who approved and when. The chart's admission policy
	// (approvals.attributed) admits a new entry only in its writer's own
	// name and groups.
	// +optional
	// +listType=map
	// +listMapKey=plan
	// +listMapKey=user
	// +kubebuilder:validation:MaxItems=32
	Approvals []Approval `json:"approvals,omitempty"`

	// ApprovalRules decide, with approval Manual, which plans apply without
	// an approval and how many approvals, from whom, the others need: the
	// first rule whose `when` holds governs a plan; a plan no rule governs
	// needs one approval. The Project's (defaults.approvalRules) are a
	// floor: where both set rules, a plan needs what both ask.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	ApprovalRules []ApprovalRule `json:"approvalRules,omitempty"`

	// ApprovalMaxAge is how long an approval stays valid after the
	// controller first saw it (status.plan.approvals): an older one no
	// longer counts, and a plan that had needed it is planned again, to be
	// approved anew. Unset: approvals do not expire (or the Project's
	// defaults.approvalMaxAge). Where both are set, the shorter counts.
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:Type=string
	// +optional
	ApprovalMaxAge *metav1.Duration `json:"approvalMaxAge,omitempty"`

	// Interval between drift re-plans of the last applied revision.
	// +kubebuilder:validation:Pattern=`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`
	// +kubebuilder:validation:Type=string
	// +optional
	Interval *metav1.Duration `json:"interval,omitempty"`

	// Suspend stops new runs; a running Job is left to finish.
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// Retry says how failed runs are retried. Defaults to the Project's.
	// +optional
	Retry *RetrySpec `json:"retry,omitempty"`

	// DestroyOnDelete destroys the Workspace's resources before it is
	// removed: a destroy plan, checked by the policy gate and approved like
	// any plan, is applied (see destroy). Unset it on a Workspace being
	// deleted to let it go and leave the resources in place.
	// +optional
	DestroyOnDelete bool `json:"destroyOnDelete,omitempty"`

	// Destroy says how destroyOnDelete destroys: through the policy gate
	// and approval (the default) or, where the cluster allows it, directly.
	// Defaults to the Project's.
	// +optional
	Destroy *DestroySpec `json:"destroy,omitempty"`

	// Runner shapes the pods of this Workspace's runs.
	// +optional
	Runner *RunnerSpec `json:"runner,omitempty"`

	// Backend selects where state lives.
	// +optional
	Backend *BackendSpec `json:"backend,omitempty"`

	// Outputs says where Terraform outputs are written.
	// +optional
	Outputs *OutputsSpec `json:"outputs,omitempty"`

	// Policy selects ValidatingPolicies, merged with the Project's selector.
	// +optional
	Policy *PolicySpec `json:"policy,omitempty"`

	// Mode says what the next apply does: Apply (the default) applies
	// plans, PlanOnly plans and never applies, Destroy plans and applies a
	// destroy of everything in the state and stays destroyed.
	// +optional
	Mode WorkspaceMode `json:"mode,omitempty"`

	// PlanRequest asks for one plan with -target or -replace addresses;
	// handled once per ID (status.lastHandledPlanRequest).
	// +optional
	PlanRequest *PlanRequest `json:"planRequest,omitempty"`
}

// WorkspacePhase is the coarse state of a Workspace.
// +kubebuilder:validation:Enum=Idle;Waiting;Planning;Validating;AwaitingApproval;AwaitingPromotion;Applying;Destroying;Failed
type WorkspacePhase string

// Workspace phases.
const (
	PhaseIdle WorkspacePhase = "Idle"
	// PhaseWaiting: a run would start, but a Workspace it depends on (or,
	// while it is deleted, one that depends on it) is not there yet.
	PhaseWaiting           WorkspacePhase = "Waiting"
	PhasePlanning          WorkspacePhase = "Planning"
	PhaseValidating        WorkspacePhase = "Validating"
	PhaseAwaitingApproval  WorkspacePhase = "AwaitingApproval"
	PhaseAwaitingPromotion WorkspacePhase = "AwaitingPromotion"
	PhaseApplying          WorkspacePhase = "Applying"
	PhaseDestroying        WorkspacePhase = "Destroying"
	PhaseFailed            WorkspacePhase = "Failed"
)

// SourceStatus is the Flux artifact last seen.
type SourceStatus struct {
	// URL of the artifact.
	URL string `json:"url,omitempty"`
	// Revision of the artifact, e.g. main@sha1:abc.
	Revision string `json:"revision,omitempty"`
	// Digest of the artifact, e.g. sha256:abc.
	Digest string `json:"digest,omitempty"`
}

// PolicyViolation is one failed validation of one policy.
type PolicyViolation struct {
	// Policy is the name of the ValidatingPolicy.
	Policy string `json:"policy"`
	// Validation is the index of the failed validation in the policy.
	Validation int32 `json:"validation"`
	// Message explains the violation.
	Message string `json:"message"`
	// Action is Deny, Audit or Warn.
	// +optional
	Action string `json:"action,omitempty"`
	// WaivedBy names the PolicyExceptions (namespace/name) that waive this
	// denial for this plan: it does not block the apply.
	// +optional
	WaivedBy []string `json:"waivedBy,omitempty"`
}

// PolicyVerdict is the result of the policy gate for one plan.
type PolicyVerdict struct {
	// Passed is true when no denying validation failed and nothing errored.
	Passed bool `json:"passed"`
	// Policies lists the evaluated policies.
	// +optional
	Policies []string `json:"policies,omitempty"`
	// Violations lists each failed validation.
	// +optional
	Violations []PolicyViolation `json:"violations,omitempty"`
	// Message summarises the verdict.
	// +optional
	Message string `json:"message,omitempty"`
	// PoliciesDigest identifies the policy versions evaluated, and the
	// waivers considered; a change to either re-evaluates the plan.
	// +optional
	PoliciesDigest string `json:"policiesDigest,omitempty"`
	// WaiversExpire is when the first waiver the verdict relies on expires;
	// the plan is evaluated again then if it is not applied yet.
	// +optional
	WaiversExpire *metav1.Time `json:"waiversExpire,omitempty"`
}

// PlanStatus describes the current plan.
type PlanStatus struct {
	// ID identifies the plan; approve it by copying it to spec.approvedPlan.
	ID string `json:"id"`
	// Revision of the source the plan was made from.
	Revision string `json:"revision,omitempty"`
	// Digest of the plan JSON (sha256:...).
	Digest string `json:"digest,omitempty"`
	// BundleDigest is the sha256 of the whole stored plan (the compressed
	// stream of plan.json, plan.txt and the binary plan), as the
	// workspace-controller read it back when it recorded the plan. The
	// apply and `kubectl magos plan show` refuse a stored plan with any
	// other, so nothing written after the plan was recorded is applied
	// or shown.
	// +optional
	BundleDigest string `json:"bundleDigest,omitempty"`
	// InputsDigest of the variable inputs the plan used.
	// +optional
	InputsDigest string `json:"inputsDigest,omitempty"`
	// ContentDigest is the digest of the files the plan's configuration
	// reads: spec.path's directory and the local modules it calls (a
	// later revision with the same digest changes nothing the Workspace
	// reads and is not planned); empty when they could not be read.
	// +optional
	ContentDigest string `json:"contentDigest,omitempty"`
	// PlannedRevision is the revision the plan was made from, once later
	// revisions that change none of those files took it over as Revision
	// without a new plan.
	// +optional
	PlannedRevision string `json:"plannedRevision,omitempty"`
	// Add, Change and Destroy count resource actions.
	Add     int32 `json:"add"`
	Change  int32 `json:"change"`
	Destroy int32 `json:"destroy"`
	// HasChanges is false for a plan that would do nothing.
	HasChanges bool `json:"hasChanges"`
	// Drift is true for a plan made by a drift re-plan.
	// +optional
	Drift bool `json:"drift,omitempty"`
	// Mode is Destroy for a destroy plan (spec.mode Destroy, or a
	// Workspace being deleted); empty for a normal plan.
	// +optional
	Mode PlanMode `json:"mode,omitempty"`
	// Policy is the verdict of the policy gate.
	// +optional
	Policy *PolicyVerdict `json:"policy,omitempty"`
	// Storage names where the plan is stored (Secret name prefix).
	// +optional
	Storage string `json:"storage,omitempty"`
	// Request is the plan request (spec.planRequest) whose targets and
	// replace addresses the plan was made with; unset for a full plan.
	// +optional
	Request *PlanRequest `json:"request,omitempty"`
	// AppliedWithoutGate is true for a plan made and applied in one run
	// (the fast path): no decision rested on it (approval Auto, no policy
	// selected the Workspace, no Rollout gated it), so no policy gate,
	// approval or apply-time proof came between the plan and the apply.
	// Its counts are the runner's reading of the engine's output.
	// +optional
	AppliedWithoutGate bool `json:"appliedWithoutGate,omitempty"`
	// NextApply says what applying the plan would do in the Workspace's
	// mode, e.g. "apply +1 ~0 -0", "destroy -3" or "none (plan-only)".
	// +optional
	NextApply string `json:"nextApply,omitempty"`
	// Approvals are the approvals of this plan (spec.approvals), as the
	// controller recorded them.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Approvals []PlanApproval `json:"approvals,omitempty"`
	// ApprovalRule is the approval rule (spec.approvalRules) that governs
	// the plan; AutoApproved says it applies the plan without approval.
	// +optional
	ApprovalRule string `json:"approvalRule,omitempty"`
	// +optional
	AutoApproved bool `json:"autoApproved,omitempty"`
	// Time the plan finished.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`
}

// ApprovalRule says what a plan it governs needs to be applied.
// +kubebuilder:validation:XValidation:rule="!has(self.autoApprove) || !self.autoApprove || (!has(self.approvals) && !has(self.groups) && !has(self.serviceAccounts))",message="an autoApprove rule takes no approvals, groups or serviceAccounts"
type ApprovalRule struct {
	// Name names the rule in status and messages.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// When is a CEL expression, true for the plans the rule governs, over
	// `plan` (add, change, destroy: the counts; destroyMode: a destroy
	// plan; drift: a drift re-plan; resources: the resources it changes,
	// each with address, module, mode, type, name and actions) and
	// `workspace` (name, namespace, labels), e.g. "plan.destroy == 0 &&
	// plan.change == 0". Empty governs every plan.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	When string `json:"when,omitempty"`
	// AutoApprove applies the plans the rule governs without an approval.
	// +optional
	AutoApprove bool `json:"autoApprove,omitempty"`
	// Approvals is how many distinct users must approve (default 1).
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	// +optional
	Approvals *int32 `json:"approvals,omitempty"`
	// Groups, when set, count only approvals by members of one of them.
	// +kubebuilder:validation:MaxItems=16
	// +listType=set
	// +optional
	Groups []string `json:"groups,omitempty"`
	// ServiceAccounts are the ServiceAccounts (namespace/name) whose
	// approvals count under this rule. An approval written by a
	// ServiceAccount (user system:serviceaccount:…: a controller that
	// writes Workspaces, a CI job) counts only under a rule that names it,
	// never as a person.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=317
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$`
	// +listType=set
	// +optional
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`
}

// Approval approves a plan in the name of a user.
type Approval struct {
	// Plan is the approved plan's ID (status.plan.id).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Plan string `json:"plan"`
	// Digest is the digest of the approved plan (status.plan.digest): the
	// entry approves the plan only while it has this digest, so a plan
	// replaced under the same ID is not approved.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=80
	Digest string `json:"digest"`
	// User is who approves, as the Kubernetes API authenticates them.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	User string `json:"user"`
	// Groups the user approves as; each one a group the API authenticates
	// them with.
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	Groups []string `json:"groups,omitempty"`
}

// PlanApproval is an approval of a plan as the controller recorded it.
type PlanApproval struct {
	// User who approved.
	User string `json:"user"`
	// Groups the user approved as.
	// +optional
	Groups []string `json:"groups,omitempty"`
	// Time the controller first saw the approval.
	Time metav1.Time `json:"time"`
}

// AppliedStatus describes the last successful apply.
type AppliedStatus struct {
	// PlanID of the applied plan.
	PlanID string `json:"planID"`
	// Revision of the applied source.
	Revision string `json:"revision,omitempty"`
	// Time of the apply.
	Time metav1.Time `json:"time"`
}

// RunStatus describes one run (a Job).
type RunStatus struct {
	// Job is the name of the run's Job.
	Job string `json:"job"`
	// JobUID is the UID of the run's Job, recorded by the controller that
	// created it, while the run is in progress. A run adopted from a Job
	// found in the cluster (its start lost from status) has none: nothing
	// tells that Job from one someone else created. The artifact proxy
	// serves only the Job recorded with its UID.
	// +optional
	JobUID types.UID `json:"jobUID,omitempty"`
	// Phase is plan, apply, destroy, or plan-apply (a plan and its apply in
	// one run, where nothing decides on the plan).
	Phase string `json:"phase"`
	// Result is Running, Succeeded or Failed.
	// +optional
	Result string `json:"result,omitempty"`
	// Revision the run worked on.
	// +optional
	Revision string `json:"revision,omitempty"`
	// InputsDigest of the inputs the run used.
	// +optional
	InputsDigest string `json:"inputsDigest,omitempty"`
	// ContentDigest of the files a plan run's configuration reads
	// (PlanStatus.ContentDigest).
	// +optional
	ContentDigest string `json:"contentDigest,omitempty"`
	// ArtifactURL is where the source artifact the run was started on is
	// served (source-controller's URL, not the artifact proxy's), while the
	// run is in progress.
	// +optional
	ArtifactURL string `json:"artifactURL,omitempty"`
	// ArtifactDigest is the digest of the artifact at ArtifactURL, while the
	// run is in progress.
	// +optional
	ArtifactDigest string `json:"artifactDigest,omitempty"`
	// PlanID the run produced (plan) or applied (apply).
	// +optional
	PlanID string `json:"planID,omitempty"`
	// Drift is true for a drift re-plan.
	// +optional
	Drift bool `json:"drift,omitempty"`
	// Mode is Destroy for the plan and the apply of a deletion's destroy
	// plan; empty otherwise (a destroy phase run destroys without a plan).
	// +optional
	Mode PlanMode `json:"mode,omitempty"`
	// Request is the plan request a plan run was started for.
	// +optional
	Request *PlanRequest `json:"request,omitempty"`
	// Started is when the run started.
	// +optional
	Started *metav1.Time `json:"started,omitempty"`
	// Finished is when the run finished.
	// +optional
	Finished *metav1.Time `json:"finished,omitempty"`
	// Reason is the runner's CamelCase reason, e.g. ArtifactRejected.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message is a short, secret-free summary.
	// +optional
	Message string `json:"message,omitempty"`
}

// LockStatus describes a state lock left behind by a run that died.
type LockStatus struct {
	// Holder is the lock's holder identity.
	Holder string `json:"holder"`
	// Lease is the name of the lock Lease.
	Lease string `json:"lease"`
	// Since is when the lock was taken, if known.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
}

// ErroredStateStatus describes state a run could not write back to the
// state Secret after changing real resources. No run starts until someone
// restores the state and acknowledges it with the magos.dev/state-restored
// annotation set to Job.
type ErroredStateStatus struct {
	// Job is the run's Job.
	Job string `json:"job"`
	// Secret holds the state the engine could not write back (gzip'd state
	// JSON under key tfstate); empty when it could not be saved either.
	// +optional
	Secret string `json:"secret,omitempty"`
	// StateSecret is the state Secret that lacks it.
	StateSecret string `json:"stateSecret"`
	// Since is when the run reported it.
	// +optional
	Since *metav1.Time `json:"since,omitempty"`
}

// WorkspaceStatus is the observed state of a Workspace.
type WorkspaceStatus struct {
	// ObservedGeneration is the last generation reconciled successfully.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions: Ready, Reconciling, Stalled, Planned, Applied, Drifted, PolicyPassed.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Phase is the coarse state of the Workspace.
	// +optional
	Phase WorkspacePhase `json:"phase,omitempty"`

	// Source is the Flux artifact last seen.
	// +optional
	Source *SourceStatus `json:"source,omitempty"`

	// Plan is the current plan.
	// +optional
	Plan *PlanStatus `json:"plan,omitempty"`

	// LastApplied is the last successful apply.
	// +optional
	LastApplied *AppliedStatus `json:"lastApplied,omitempty"`

	// CurrentRun is the run in progress, if any.
	// +optional
	CurrentRun *RunStatus `json:"currentRun,omitempty"`

	// Outputs lists the names (never the values) of the written outputs.
	// +optional
	Outputs []string `json:"outputs,omitempty"`

	// OutputVersions says, per written output, which applied plan last
	// changed its value. A dependent that reads an output folds
	// "<workspace>/<output>=<planID>" into its inputs digest, so it re-plans
	// when, and only when, an output it reads changes. No digest of a value
	// is kept anywhere: outputs may be sensitive and short values could be
	// guessed from one.
	// +listType=map
	// +listMapKey=name
	// +optional
	OutputVersions []OutputVersion `json:"outputVersions,omitempty"`

	// Lock shows the holder of a stuck state lock.
	// +optional
	Lock *LockStatus `json:"lock,omitempty"`

	// ErroredState shows state a run changed but could not write back.
	// +optional
	ErroredState *ErroredStateStatus `json:"erroredState,omitempty"`

	// Dependencies shows, per spec.dependsOn entry, whether it is Ready and
	// what this Workspace waits for.
	// +listType=map
	// +listMapKey=name
	// +optional
	Dependencies []DependencyStatus `json:"dependencies,omitempty"`

	// LastHandledReconcileAt is the last reconcile request
	// (ReconcileRequestAnnotation) the controller acted on.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`

	// LastHandledPlanRequest is the ID of the last plan request
	// (spec.planRequest) a plan was made for.
	// +optional
	LastHandledPlanRequest string `json:"lastHandledPlanRequest,omitempty"`

	// Retry is the retry state after the newest run failed: cleared when a
	// run succeeds, when the failure is released (unlock, restored state) and
	// ignored once the revision or inputs change.
	// +optional
	Retry *RetryStatus `json:"retry,omitempty"`

	// Runs counts the runs started; it makes run names unique.
	// +optional
	Runs int64 `json:"runs,omitempty"`

	// InputsDigest is the digest of the inputs the Workspace uses now.
	// +optional
	InputsDigest string `json:"inputsDigest,omitempty"`

	// History holds the most recent runs, newest first.
	// +kubebuilder:validation:MaxItems=10
	// +optional
	History []RunStatus `json:"history,omitempty"`
}

// DependencyStatus is the state of one Workspace this one depends on.
type DependencyStatus struct {
	// Name of the Workspace depended on.
	Name string `json:"name"`
	// Ready: it is Ready with its latest revision applied.
	Ready bool `json:"ready"`
	// Message says what this Workspace waits for, when it is not Ready.
	// +optional
	Message string `json:"message,omitempty"`
}

// OutputVersion is the applied plan that last changed an output's value.
type OutputVersion struct {
	// Name of the output.
	Name string `json:"name"`
	// PlanID of the apply that last wrote a new value.
	PlanID string `json:"planID"`
}

// RetryStatus is how a Workspace recovers from its newest failed run
// (status.history[0]).
type RetryStatus struct {
	// Attempts counts the runs in a row that failed for the same revision
	// and inputs.
	Attempts int32 `json:"attempts"`

	// NextTime is when the next attempt starts; unset when the failure is
	// not retried (it stalls until the revision, inputs or spec change).
	// +optional
	NextTime *metav1.Time `json:"nextTime,omitempty"`
}

// Workspace runs one Terraform/OpenTofu configuration from a Flux source.
// +genclient
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="Workspace names are at most 63 characters: they are used in label values"
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ws;tfws,categories=magos
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.source.revision`
// +kubebuilder:printcolumn:name="Next",type=string,JSONPath=`.status.plan.nextApply`
// +kubebuilder:printcolumn:name="Add",type=integer,JSONPath=`.status.plan.add`,priority=1
// +kubebuilder:printcolumn:name="Change",type=integer,JSONPath=`.status.plan.change`,priority=1
// +kubebuilder:printcolumn:name="Destroy",type=integer,JSONPath=`.status.plan.destroy`,priority=1
// +kubebuilder:printcolumn:name="Plan",type=string,JSONPath=`.status.plan.id`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].message`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Workspace struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WorkspaceSpec `json:"spec,omitempty"`
	// A new object reads status.observedGeneration -1 until its controller
	// first writes status, so kstatus (Flux health checks, kubectl wait
	// --for=jsonpath, Argo CD) sees it in progress, never Current before it
	// was reconciled.
	// +kubebuilder:default={observedGeneration:-1}
	Status WorkspaceStatus `json:"status,omitempty"`
}

// WorkspaceList is a list of Workspaces.
// +kubebuilder:object:root=true
type WorkspaceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Workspace `json:"items"`
}

// GetConditions returns the status conditions.
func (in *Workspace) GetConditions() []metav1.Condition { return in.Status.Conditions }

// SetConditions replaces the status conditions.
func (in *Workspace) SetConditions(c []metav1.Condition) { in.Status.Conditions = c }
