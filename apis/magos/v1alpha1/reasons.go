package v1alpha1

import "slices"

// Reasons of the conditions and events of the five kinds, besides the
// shared ones (condition_types.go) and a run's (run_contract.go).
// ReasonTable says what each means and how it recovers.
const (
	// Workspace: runs and their outcome.
	ReasonPlanning                 = "Planning"
	ReasonApplying                 = "Applying"
	ReasonDestroying               = "Destroying"
	ReasonPlanned                  = "Planned"
	ReasonApplied                  = "Applied"
	ReasonNoChanges                = "NoChanges"
	ReasonRevisionUnchanged        = "RevisionUnchanged"
	ReasonConfigurationRefused     = "ConfigurationRefused"
	ReasonPlanOnly                 = "PlanOnly"
	ReasonDriftDetected            = "DriftDetected"
	ReasonNoDrift                  = "NoDrift"
	ReasonQueued                   = "Queued"
	ReasonAwaitingApproval         = "AwaitingApproval"
	ReasonApproved                 = "Approved"
	ReasonAutoApproved             = "AutoApproved"
	ReasonApprovalExpired          = "ApprovalExpired"
	ReasonInvalidApprovalRule      = "InvalidApprovalRule"
	ReasonAwaitingPromotion        = "AwaitingPromotion"
	ReasonRetriesExhausted         = "RetriesExhausted"
	ReasonUnlocked                 = "Unlocked"
	ReasonStateRestored            = "StateRestored"
	ReasonPlanNotRecorded          = "PlanNotRecorded"
	ReasonPlanIdentityNotRevoked   = "PlanIdentityNotRevoked"
	ReasonRunTimeoutCapped         = "RunTimeoutCapped"
	ReasonIntervalRaised           = "IntervalRaised"
	ReasonJobMissing               = "JobMissing"
	ReasonDeadlineExceeded         = "DeadlineExceeded"
	ReasonOOMKilled                = "OOMKilled"
	ReasonEvicted                  = "Evicted"
	ReasonImagePullFailed          = "ImagePullFailed"
	ReasonRunStartFailed           = "RunStartFailed"
	ReasonRunnerVersionMismatch    = "RunnerVersionMismatch"
	ReasonPlanStorageLimitExceeded = "PlanStorageLimitExceeded"
	ReasonNoReport                 = "NoReport"
	ReasonNoPlan                   = "NoPlan"
	ReasonOutdated                 = "Outdated"
	ReasonNotApplied               = "NotApplied"
	ReasonPendingPlan              = "PendingPlan"

	// Workspace: deletion.
	ReasonDestroyPlanned          = "DestroyPlanned"
	ReasonDestroyAwaitingApproval = "DestroyAwaitingApproval"
	ReasonDestroyed               = "Destroyed"
	ReasonDestroySkipped          = "DestroySkipped"
	ReasonDestroyGateEnforced     = "DestroyGateEnforced"
	ReasonDependentsExist         = "DependentsExist"

	// Workspace: the policy gate.
	ReasonPolicyPassed            = "PolicyPassed"
	ReasonPolicyViolation         = "PolicyViolation"
	ReasonPolicyError             = "PolicyError"
	ReasonPolicyDenied            = "PolicyDenied"
	ReasonPlanTooLarge            = "PlanTooLarge"
	ReasonNamespacedPolicyIgnored = "NamespacedPolicyIgnored"
	ReasonPolicyWaived            = "PolicyWaived"
	ReasonWaiverNotAllowed        = "WaiverNotAllowed"

	// Workspace: inputs, references and dependencies.
	ReasonSourceNotReady         = "SourceNotReady"
	ReasonProjectNotReady        = "ProjectNotReady"
	ReasonVariableSetNotReady    = "VariableSetNotReady"
	ReasonSecretMissing          = "SecretMissing"
	ReasonOutputNotAvailable     = "OutputNotAvailable"
	ReasonDependencyNotReady     = "DependencyNotReady"
	ReasonDependencyCycle        = "DependencyCycle"
	ReasonOutputRefNotDependency = "OutputRefNotDependency"
	ReasonOutputReadNotAllowed   = "OutputReadNotAllowed"
	ReasonDuplicateVariable      = "DuplicateVariable"
	ReasonReservedEnvironment    = "ReservedEnvironment"
	ReasonSensitiveLiteral       = "SensitiveLiteral"

	// Workspace: what the cluster or the Project refuses.
	ReasonProjectRequired                = "ProjectRequired"
	ReasonProjectClaimsNamespace         = "ProjectClaimsNamespace"
	ReasonSourceNotAllowed               = "SourceNotAllowed"
	ReasonCrossNamespaceSourceNotAllowed = "CrossNamespaceSourceNotAllowed"
	ReasonAnnotationNotAllowed           = "AnnotationNotAllowed"
	ReasonRunnerImageNotAllowed          = "RunnerImageNotAllowed"
	ReasonEngineImageNotAllowed          = "EngineImageNotAllowed"
	ReasonEngineImageNotConfigured       = "EngineImageNotConfigured"
	ReasonCLIConfigNotAllowed            = "CLIConfigNotAllowed"
	ReasonPlacementNotAllowed            = "PlacementNotAllowed"
	ReasonPodMetadataNotAllowed          = "PodMetadataNotAllowed"
	ReasonRunnerOverrideForbidden        = "RunnerOverrideForbidden"
	ReasonInvalidRunnerConfig            = "InvalidRunnerConfig"
	ReasonStorageConflict                = "StorageConflict"
	ReasonStorageReferenceNotAllowed     = "StorageReferenceNotAllowed"
	ReasonServiceAccountTokenNotAllowed  = "ServiceAccountTokenNotAllowed"
	ReasonRunnerIdentityFailed           = "RunnerIdentityFailed"

	// Rollout.
	ReasonRolledOut          = "RolledOut"
	ReasonNoWorkspaces       = "NoWorkspaces"
	ReasonMixedSources       = "MixedSources"
	ReasonConflictingRollout = "ConflictingRollout"
	ReasonWorkspaceFailed    = "WorkspaceFailed"
	ReasonAborted            = "Aborted"
	ReasonNotHalted          = "NotHalted"

	// WorkspaceSet.
	ReasonGenerated         = "Generated"
	ReasonGeneratorFailed   = "GeneratorFailed"
	ReasonInvalidTemplate   = "InvalidTemplate"
	ReasonTooManyElements   = "TooManyElements"
	ReasonWorkspaceConflict = "WorkspaceConflict"
	ReasonWorkspaceReverted = "WorkspaceReverted"
	ReasonWorkspaceOrphaned = "WorkspaceOrphaned"
	ReasonWorkspaceDeleted  = "WorkspaceDeleted"
	ReasonGenerating        = "Generating"

	// Project and VariableSet.
	ReasonVariableSetsReady   = "VariableSetsReady"
	ReasonListFailed          = "ListFailed"
	ReasonReferenceNotFound   = "ReferenceNotFound"
	ReasonReferenceReadFailed = "ReferenceReadFailed"
)

// ReasonClass is how an object recovers from what a reason says. It decides
// the object's kstatus: a reason of class ReasonStalls sets Stalled=True
// (Failed) and nothing is retried; ReasonRetries and ReasonProgresses set
// Reconciling=True (InProgress); ReasonWaits is no failure.
type ReasonClass string

const (
	// ReasonStalls: only a person, a new revision or a change of the spec
	// or of what it references helps.
	ReasonStalls ReasonClass = "Stalls"
	// ReasonRetries: a failure the controller retries by itself, with
	// backoff.
	ReasonRetries ReasonClass = "Retries"
	// ReasonWaits: waiting, not failing: for something to appear or become
	// Ready (woken by a watch), for a slot, or for a person's decision.
	ReasonWaits ReasonClass = "Waits"
	// ReasonProgresses: work in progress.
	ReasonProgresses ReasonClass = "Progresses"
	// ReasonSettles: a state reached, or a notice in an event; nothing to
	// recover from.
	ReasonSettles ReasonClass = "Settles"
)

// +kubebuilder:object:generate=false

// ReasonInfo describes one reason.
type ReasonInfo struct {
	Reason string
	Class  ReasonClass
	// Kinds are the kinds whose conditions, events or runs carry it.
	Kinds []string
	// Meaning says what happened and what helps.
	Meaning string
}

var (
	workspaceOnly = []string{WorkspaceKind}
	rolloutOnly   = []string{RolloutKind}
	setOnly       = []string{WorkspaceSetKind}
	allKinds      = []string{WorkspaceKind, RolloutKind, ProjectKind, VariableSetKind, WorkspaceSetKind}
)

// reasonTable is every reason, the single source for kstatus (which failures
// stall), for docs/reasons.md and for the reasons alerts and dashboards name.
var reasonTable = []ReasonInfo{
	// Shared.
	{ReconciliationSucceededReason, ReasonSettles, allKinds, "The last reconcile succeeded (and, for a run, the run did what it was asked to)."},
	{ProgressingReason, ReasonProgresses, allKinds, "The controller is working on a new generation."},
	{ProgressingWithRetryReason, ReasonRetries, allKinds, "The last attempt failed and is retried; the Ready condition's reason says why it failed."},
	{InvalidSpecReason, ReasonStalls, allKinds, "The spec cannot be acted on until it changes."},
	{SuspendedReason, ReasonWaits, allKinds, "spec.suspend is true: nothing runs until it is false."},

	// Workspace: runs.
	{ReasonPlanning, ReasonProgresses, workspaceOnly, "A plan run is in progress."},
	{ReasonApplying, ReasonProgresses, workspaceOnly, "An apply run (or a fast run, planned and applied in one Job) is in progress."},
	{ReasonDestroying, ReasonProgresses, workspaceOnly, "A destroy run is in progress, or a deleted Workspace is being destroyed."},
	{ReasonPlanned, ReasonSettles, workspaceOnly, "A plan was made (Planned=True and an event with its counts)."},
	{ReasonApplied, ReasonSettles, workspaceOnly, "The plan of the current revision is applied: the Workspace is Ready."},
	{ReasonNoChanges, ReasonSettles, workspaceOnly, "The plan has no changes: nothing to apply."},
	{ReasonRevisionUnchanged, ReasonSettles, workspaceOnly, "A new revision changes none of the bytes the Workspace's plan can depend on (its path, the local modules it calls, the files its configuration reads, links, spec.triggerPaths; docs/flux.md): the plan, applied or pending with its approvals, stands for it, nothing is planned."},
	{ReasonConfigurationRefused, ReasonStalls, workspaceOnly, "A configuration file the Workspace reads nests beyond what the controller parses (a hostile or generated file): no plan starts until a revision changes it."},
	{ReasonNoPlan, ReasonProgresses, workspaceOnly, "No plan for the current revision and inputs yet (Planned=False)."},
	{ReasonOutdated, ReasonProgresses, workspaceOnly, "The plan in status is for an earlier revision or other inputs (Planned=False)."},
	{ReasonNotApplied, ReasonProgresses, workspaceOnly, "Nothing is applied yet (Applied=False)."},
	{ReasonPendingPlan, ReasonProgresses, workspaceOnly, "The current plan's changes are not applied yet (Applied=False)."},
	{ReasonPlanOnly, ReasonSettles, workspaceOnly, "A plan-only Workspace's plan has changes that it never applies (Drifted=True)."},
	{ReasonDriftDetected, ReasonSettles, workspaceOnly, "A drift check found changes made outside Magos (a Warning event; Drifted=True)."},
	{ReasonNoDrift, ReasonSettles, workspaceOnly, "The last plan or drift check found no changes (Drifted=False)."},
	{ReasonQueued, ReasonWaits, workspaceOnly, "A run is due but waits for a slot under the controller's, the namespace's or the Project's bound on runs in progress, or the namespace's plan rate."},
	{ReasonAwaitingApproval, ReasonWaits, workspaceOnly, "approval: Manual and spec.approvedPlan does not name the plan: a person approves it (kubectl magos approve)."},
	{ReasonApprovalExpired, ReasonProgresses, workspaceOnly, "An approval the plan needed is older than spec.approvalMaxAge: the plan is made again, to be approved anew."},
	{ReasonAutoApproved, ReasonProgresses, workspaceOnly, "An approval rule (spec.approvalRules) with autoApprove governs the plan: it is applied without an approval; the event names the rule."},
	{ReasonInvalidApprovalRule, ReasonStalls, workspaceOnly, "An approval rule's `when` does not compile or evaluate (CEL): the message names the rule and the error; plans wait until it is fixed."},
	{ReasonApproved, ReasonProgresses, workspaceOnly, "A user approved the plan (spec.approvals); the event names who, as the Kubernetes API authenticated them."},
	{ReasonAwaitingPromotion, ReasonWaits, workspaceOnly, "The governing Rollout has not admitted the plan's revision to the Workspace's stage yet."},
	{ReasonRetriesExhausted, ReasonStalls, workspaceOnly, "Runs failed spec.retry.maxAttempts times in a row for the same revision and inputs; a new revision, a change of inputs or a reconcile request starts another attempt."},
	{ReasonUnlocked, ReasonSettles, workspaceOnly, "The state lock a person named in magos.dev/unlock was released (event); the Workspace plans afresh."},
	{ReasonStateRestored, ReasonSettles, workspaceOnly, "The state of a run that could not write it back was marked restored (event); the Workspace plans again."},
	{ReasonPlanNotRecorded, ReasonSettles, workspaceOnly, "A fast run applied its plan, but the stored plan could not be read back to record it (a Warning event; the apply is recorded)."},
	{ReasonPlanIdentityNotRevoked, ReasonSettles, workspaceOnly, "The plan identity of a finished plan could not be deleted (a Warning event); its tokens stay valid until they expire."},
	{ReasonRunTimeoutCapped, ReasonSettles, workspaceOnly, "The Workspace or its Project asks for a run deadline over --max-run-timeout; its runs get the maximum (a Warning event per run)."},
	{ReasonIntervalRaised, ReasonSettles, workspaceOnly, "The Workspace or its Project asks for drift checks more often than --min-interval allows; they come at the minimum."},
	{ReasonNoReport, ReasonRetries, workspaceOnly, "The runner exited without a report."},
	{ReasonJobMissing, ReasonRetries, workspaceOnly, "The run's Job and Pod are gone and its result was never read."},
	{ReasonDeadlineExceeded, ReasonRetries, workspaceOnly, "The run's Job reached its deadline (spec.runner.timeout)."},
	{ReasonOOMKilled, ReasonRetries, workspaceOnly, "The kernel killed the runner for exceeding its memory limit: raise spec.runner.resources."},
	{ReasonEvicted, ReasonRetries, workspaceOnly, "The runner Pod was evicted, preempted or stopped by its node."},
	{ReasonImagePullFailed, ReasonRetries, workspaceOnly, "An image of the run's Pod (the runner or the engine image) cannot be pulled; the run fails at once."},
	{ReasonRunStartFailed, ReasonRetries, workspaceOnly, "The kubelet cannot create the run's container (a key its environment names is missing, or the runtime refused it); the run fails at once."},
	{ReasonRunnerVersionMismatch, ReasonRetries, workspaceOnly, "The runner speaks another major version of the run contract than the controller, or predates it: its report is not trusted and the run failed. Of the same contract but another version, a Warning event and the run's message say so."},
	{ReasonPlanStorageLimitExceeded, ReasonRetries, workspaceOnly, "The plan needs more plan Secrets than --max-plan-chunks allows one Workspace; nothing of it is stored."},
	{ReasonPlanStorageExhausted, ReasonProgresses, workspaceOnly, "The plan needs more plan Secrets than were reserved; the controller reserves them and plans again."},
	{ReasonStateNotSaved, ReasonStalls, workspaceOnly, "A run changed real resources but could not write the state back: no run starts until a person restores it (the Ready message says how)."},
	{ReasonStateTooLarge, ReasonStalls, workspaceOnly, "The configuration's state does not fit the state Secret; the apply refused to start."},
	{ReasonStateLocked, ReasonStalls, workspaceOnly, "Another run holds the state lock; a person releases it with the magos.dev/unlock annotation naming its holder."},

	// A run's own reasons (the runner's report).
	{ReasonRunFailed, ReasonRetries, workspaceOnly, "A run failed; the event and status.history name the run and its message."},
	{ReasonInvalidConfig, ReasonRetries, workspaceOnly, "The runner's environment is missing or malformed."},
	{ReasonKubernetesClient, ReasonRetries, workspaceOnly, "The runner could not set up its Kubernetes client."},
	{ReasonArtifactFetchFailed, ReasonRetries, workspaceOnly, "The source artifact could not be downloaded or unpacked."},
	{ReasonArtifactDigestMismatch, ReasonStalls, workspaceOnly, "The artifact's bytes do not match its digest; a new revision helps."},
	{ReasonArtifactRejected, ReasonStalls, workspaceOnly, "The artifact holds an entry the runner refuses (a path or link leaving its root, a file too large); a new revision helps."},
	{ReasonPathNotFound, ReasonStalls, workspaceOnly, "spec.path is not a directory of the artifact."},
	{ReasonEngineNotFound, ReasonStalls, workspaceOnly, "The requested engine version is not in the engine image or does not run."},
	{ReasonBackendFailed, ReasonRetries, workspaceOnly, "The state backend could not be set up."},
	{ReasonInitFailed, ReasonRetries, workspaceOnly, "The engine's init failed (providers, modules)."},
	{ReasonPlanFailed, ReasonRetries, workspaceOnly, "The engine could not make or render the plan."},
	{ReasonPlanStoreFailed, ReasonRetries, workspaceOnly, "The plan Secrets could not be written or read."},
	{ReasonPlanNotFound, ReasonRetries, workspaceOnly, "An apply found no stored plan; the Workspace plans again."},
	{ReasonPlanCorrupt, ReasonRetries, workspaceOnly, "The stored plan fails its checksums or is not the plan the run reported; the Workspace plans again."},
	{ReasonPlanDigestMismatch, ReasonRetries, workspaceOnly, "The stored plan is not the approved one; nothing was applied."},
	{ReasonPlanBinaryMismatch, ReasonRetries, workspaceOnly, "The stored plan was rewritten after it was recorded, or does not match its artifact or backend; nothing was applied."},
	{ReasonPlanStale, ReasonRetries, workspaceOnly, "The state changed after the plan was made; the Workspace plans again."},
	{ReasonApplyFailed, ReasonRetries, workspaceOnly, "The engine's apply failed."},
	{ReasonDestroyFailed, ReasonRetries, workspaceOnly, "The engine's destroy failed."},
	{ReasonOutputsFailed, ReasonRetries, workspaceOnly, "The apply succeeded but its outputs could not be written."},
	{ReasonCanceled, ReasonRetries, workspaceOnly, "The run was stopped (SIGTERM) before it finished."},

	// Workspace: deletion.
	{ReasonDestroyPlanned, ReasonSettles, workspaceOnly, "A destroy plan was made (Planned=True and an event)."},
	{ReasonDestroyAwaitingApproval, ReasonWaits, workspaceOnly, "A deleted Workspace with approval: Manual keeps its finalizer until spec.approvedPlan names its destroy plan."},
	{ReasonDestroyed, ReasonSettles, workspaceOnly, "The Workspace's resources are destroyed (event)."},
	{ReasonDestroySkipped, ReasonSettles, workspaceOnly, "A deleted Workspace goes without a destroy (no artifact, a guard refuses it, unresolvable inputs); its resources and state stay (a Warning event)."},
	{ReasonDestroyGateEnforced, ReasonSettles, workspaceOnly, "The Workspace asked to skip the destroy gate and the cluster does not allow it: the destroy is planned, checked and approved like any plan (a Warning event)."},
	{ReasonDependentsExist, ReasonWaits, workspaceOnly, "A deleted Workspace waits for the Workspaces that depend on it to go first."},

	// Workspace: the policy gate.
	{ReasonPolicyPassed, ReasonSettles, workspaceOnly, "The policy gate passed the plan, or no policy decides on it."},
	{ReasonPolicyViolation, ReasonStalls, workspaceOnly, "A policy refused the plan: a new plan or a change of the selected policies is evaluated again."},
	{ReasonPolicyError, ReasonRetries, workspaceOnly, "The policies could not be read or evaluated; evaluated again after 30 s."},
	{ReasonPolicyDenied, ReasonSettles, workspaceOnly, "The policy gate refused a plan (counted in magos_workspace_run_failures_total)."},
	{ReasonPlanTooLarge, ReasonStalls, workspaceOnly, "The stored plan is over the gate's size bounds and can never be evaluated; a new plan or a change of policies helps."},
	{ReasonPolicyWaived, ReasonProgresses, workspaceOnly, "A policy denied the plan and a PolicyException bound to the Workspace and the plan's digest waives it: the apply goes on; the event names the policies and the exceptions."},
	{ReasonWaiverNotAllowed, ReasonSettles, workspaceOnly, "A PolicyException bound to the plan names a cluster ValidatingPolicy that does not allow waivers (annotation magos.dev/waivable: \"true\"): it lifts nothing (a Warning event and the verdict's message name it)."},
	{ReasonNamespacedPolicyIgnored, ReasonSettles, workspaceOnly, "NamespacedValidatingPolicies select the Workspace, but its namespace may not gate with them (--namespaced-policies-namespace-selector): a Warning event."},

	// Workspace: inputs, references and dependencies.
	{ReasonSourceNotReady, ReasonWaits, []string{WorkspaceKind, RolloutKind}, "The source has no artifact yet, or is not Ready; woken when it is (a read error is retried)."},
	{ReasonProjectNotReady, ReasonWaits, workspaceOnly, "The Workspace's Project is missing or not Ready."},
	{ReasonVariableSetNotReady, ReasonWaits, []string{WorkspaceKind, ProjectKind}, "A referenced VariableSet is missing or not Ready."},
	{ReasonSecretMissing, ReasonWaits, workspaceOnly, "A variable, env entry, volume or CLI configuration reads a Secret that does not exist yet; the run waits until it does, so that it is checked first."},
	{ReasonOutputNotAvailable, ReasonWaits, workspaceOnly, "An outputRef names an output its Workspace has not written yet."},
	{ReasonDependencyNotReady, ReasonWaits, workspaceOnly, "A run would start, but a Workspace in spec.dependsOn is missing or not Ready."},
	{ReasonDependencyCycle, ReasonStalls, workspaceOnly, "spec.dependsOn leads back to the Workspace."},
	{ReasonOutputRefNotDependency, ReasonStalls, workspaceOnly, "An outputRef names a Workspace that is not in spec.dependsOn."},
	{ReasonOutputReadNotAllowed, ReasonStalls, workspaceOnly, "The Workspace reads the outputs of a dependency whose spec.outputs.readers does not name it; the producer's consent helps."},
	{ReasonDuplicateVariable, ReasonStalls, workspaceOnly, "Two variables of the same precedence set one name."},
	{ReasonReservedEnvironment, ReasonStalls, workspaceOnly, "A variable sets an environment variable that Magos or the engine reserves."},
	{ReasonSensitiveLiteral, ReasonStalls, workspaceOnly, "A variable marked sensitive has a literal value, which would land in the Job spec: read it from a Secret."},

	// Workspace: what the cluster or the Project refuses.
	{ReasonProjectRequired, ReasonStalls, workspaceOnly, "The Workspace names no Project where the cluster requires one."},
	{ReasonProjectClaimsNamespace, ReasonStalls, workspaceOnly, "The namespace is claimed by a Project (spec.members: Namespace) that spec.projectRef does not name, or by more than one."},
	{ReasonSourceNotAllowed, ReasonStalls, workspaceOnly, "The Project does not allow the Workspace's source."},
	{ReasonCrossNamespaceSourceNotAllowed, ReasonStalls, workspaceOnly, "The source is in another namespace and the cluster refuses cross-namespace references."},
	{ReasonAnnotationNotAllowed, ReasonStalls, workspaceOnly, "The Workspace carries an annotation its Project does not allow."},
	{ReasonRunnerImageNotAllowed, ReasonStalls, workspaceOnly, "The runner image matches no pattern of the cluster's allow-list (--allowed-runner-images)."},
	{ReasonEngineImageNotAllowed, ReasonStalls, workspaceOnly, "The engine image matches no pattern of the cluster's allow-list (--allowed-runner-images)."},
	{ReasonEngineImageNotConfigured, ReasonStalls, workspaceOnly, "The engine has no engine image (not on the Workspace, its Project or the controller)."},
	{ReasonCLIConfigNotAllowed, ReasonStalls, workspaceOnly, "The runner is given a CLI configuration and the cluster forbids it."},
	{ReasonPlacementNotAllowed, ReasonStalls, workspaceOnly, "The runner asks for a priority class, toleration, node label or Pod affinity the cluster does not allow."},
	{ReasonPodMetadataNotAllowed, ReasonStalls, workspaceOnly, "The runner puts a label or annotation on its Pods whose key the cluster does not allow."},
	{ReasonRunnerOverrideForbidden, ReasonStalls, workspaceOnly, "The Workspace sets a runner field its Project forbids members to override."},
	{ReasonInvalidRunnerConfig, ReasonStalls, workspaceOnly, "The effective runner configuration cannot run (two volumes at one path, a mount over the engines, Pod metadata Kubernetes refuses)."},
	{ReasonStorageConflict, ReasonStalls, workspaceOnly, "An object the runner would write (a state, plan or outputs Secret, the lock Lease) exists and was not created by Magos for this Workspace."},
	{ReasonStorageReferenceNotAllowed, ReasonStalls, workspaceOnly, "A variable or env entry reads a Secret Magos keeps for a Workspace (state, plan, outputs) that is not a dependency's outputs."},
	{ReasonServiceAccountTokenNotAllowed, ReasonStalls, workspaceOnly, "A variable, env entry, volume or CLI configuration reads a ServiceAccount token Secret."},
	{ReasonRunnerIdentityFailed, ReasonRetries, workspaceOnly, "The runner's ServiceAccount, Role or RoleBinding could not be written."},

	// Rollout.
	{ReasonRolledOut, ReasonSettles, rolloutOnly, "The revision is rolled out to every stage: the Rollout is Ready."},
	{ReasonNoWorkspaces, ReasonWaits, rolloutOnly, "The Project has no Workspaces yet."},
	{ReasonMixedSources, ReasonStalls, rolloutOnly, "The Rollout's Workspaces do not share one source."},
	{ReasonConflictingRollout, ReasonStalls, rolloutOnly, "Another Rollout governs the same Workspaces."},
	{ReasonWorkspaceFailed, ReasonStalls, rolloutOnly, "A stage is halted: a Workspace of it failed (Halted=True); a new revision or the Workspace's recovery helps."},
	{ReasonAborted, ReasonStalls, rolloutOnly, "A stage is halted by a person (Halted=True)."},
	{ReasonNotHalted, ReasonSettles, rolloutOnly, "No stage is halted (Halted=False)."},

	// WorkspaceSet.
	{ReasonGenerated, ReasonSettles, setOnly, "Every element's Workspace is generated and up to date with the template."},
	{ReasonGenerating, ReasonProgresses, setOnly, "Workspaces are being created or updated, a bounded number per second."},
	{ReasonGeneratorFailed, ReasonStalls, setOnly, "A generator could not produce its elements (an artifact that cannot be read, a selector that is not valid): nothing was changed."},
	{ReasonInvalidTemplate, ReasonStalls, setOnly, "An element lacks a parameter the template names, or renders a name, label or annotation the API would not take or Magos or Kubernetes own, or a name another element renders too: those elements are not applied, the others are, and no Workspace is removed meanwhile."},
	{ReasonTooManyElements, ReasonStalls, setOnly, "The generators yield more elements than spec.maxElements: nothing was changed."},
	{ReasonWorkspaceConflict, ReasonStalls, setOnly, "A Workspace of a generated name exists and the set does not own it: nothing was changed."},
	{ReasonWorkspaceReverted, ReasonSettles, setOnly, "Someone edited a field of a generated Workspace that the template sets; the set put it back (a Warning event)."},
	{ReasonWorkspaceOrphaned, ReasonSettles, setOnly, "An element is gone and deletionPolicy is Orphan: its Workspace, state and resources stay, no longer owned by the set (event)."},
	{ReasonWorkspaceDeleted, ReasonSettles, setOnly, "An element is gone and deletionPolicy is Delete: its Workspace was deleted, running its own gated destroy if it has destroyOnDelete (event)."},

	// Project and VariableSet.
	{ReasonVariableSetsReady, ReasonSettles, []string{ProjectKind}, "Every referenced VariableSet is Ready."},
	{ReasonListFailed, ReasonRetries, []string{ProjectKind, RolloutKind, WorkspaceSetKind}, "Member Workspaces or VariableSets could not be listed."},
	{ReasonReferenceNotFound, ReasonWaits, []string{VariableSetKind}, "A required Secret, ConfigMap or key is missing; woken when it appears."},
	{ReasonReferenceReadFailed, ReasonRetries, []string{VariableSetKind}, "A referenced object could not be read (an apiserver or permission error)."},
}

// ReasonTable returns every reason, in the order docs/reasons.md lists them.
func ReasonTable() []ReasonInfo { return slices.Clone(reasonTable) }

var reasonsByName = func() map[string]ReasonInfo {
	m := make(map[string]ReasonInfo, len(reasonTable))
	for _, r := range reasonTable {
		m[r.Reason] = r
	}
	return m
}()

// LookupReason returns what reason means and how it recovers.
func LookupReason(reason string) (ReasonInfo, bool) {
	r, ok := reasonsByName[reason]
	return r, ok
}

// ReasonStallsRecovery says whether what reason says needs a person, a new
// revision or a spec change: a run failure with such a reason is never
// retried and stalls its Workspace.
func ReasonStallsRecovery(reason string) bool {
	return reasonsByName[reason].Class == ReasonStalls
}
