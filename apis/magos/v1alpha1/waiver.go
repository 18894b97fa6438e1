package v1alpha1

// A waiver is a Kyverno PolicyException (policies.kyverno.io) that lets
// one plan of one Workspace past the policy gate: it lives in the
// Workspace's namespace, names the policies in spec.policyRefs, expires
// (spec.expiresAt is required) and is bound to the Workspace and the
// plan by these spec.properties. A plan with any other digest is not
// waived.
const (
	// WaiverWorkspaceProperty names the Workspace the exception waives for.
	WaiverWorkspaceProperty = "magos.dev/workspace"
	// WaiverPlanDigestProperty is the digest of the plan it waives for
	// (status.plan.digest).
	WaiverPlanDigestProperty = "magos.dev/plan-digest"
	// WaiverPlanProperty names the plan's ID, for people.
	WaiverPlanProperty = "magos.dev/plan"
	// WaiverCreatedByProperty is the user who created the exception, as the
	// API authenticated them; the chart's admission policy refuses any
	// other name.
	WaiverCreatedByProperty = "magos.dev/created-by"
	// WaiverReasonProperty says why.
	WaiverReasonProperty = "magos.dev/reason"
)
