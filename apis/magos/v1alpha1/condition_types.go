package v1alpha1

// Condition types shared by all Magos kinds. They follow kstatus so that
// `kubectl wait --for=condition=Ready` and Flux health checks work.
const (
	// ReadyCondition is True when the object's last reconciliation succeeded
	// and what its spec asks for is in place ("normal-true" polarity).
	ReadyCondition = "Ready"

	// ReconcilingCondition is True while the controller is working towards the
	// spec, including retries after a transient failure ("abnormal-true").
	ReconcilingCondition = "Reconciling"

	// StalledCondition is True when the controller cannot progress without a
	// change to the spec or its references ("abnormal-true").
	StalledCondition = "Stalled"
)

// Condition types specific to Workspaces.
const (
	// PlannedCondition is True when a plan for the current source revision and
	// inputs exists ("normal-true").
	PlannedCondition = "Planned"

	// AppliedCondition is True when the last plan was applied ("normal-true").
	AppliedCondition = "Applied"

	// DriftedCondition is True when a drift re-plan found changes that were
	// not made through Magos ("abnormal-true").
	DriftedCondition = "Drifted"

	// PolicyPassedCondition is True when the current plan passed every
	// selected ValidatingPolicy ("normal-true").
	PolicyPassedCondition = "PolicyPassed"
)

// Reasons shared by all kinds.
const (
	// ReconciliationSucceededReason: the last reconciliation succeeded.
	ReconciliationSucceededReason = "Succeeded"
	// ProgressingReason: the controller is working on a new generation.
	ProgressingReason = "Progressing"
	// ProgressingWithRetryReason: the last attempt failed and will be retried.
	ProgressingWithRetryReason = "ProgressingWithRetry"
	// InvalidSpecReason: the spec cannot be acted on until it changes.
	InvalidSpecReason = "InvalidSpec"
	// SuspendedReason: spec.suspend is true.
	SuspendedReason = "Suspended"
)
