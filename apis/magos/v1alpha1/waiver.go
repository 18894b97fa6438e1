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

// WaivableAnnotation, set to "true" on a cluster ValidatingPolicy, lets
// waivers lift its denials. A waiver lives in the Workspace's namespace,
// where the admin may not control who creates PolicyExceptions, so it
// lifts a NamespacedValidatingPolicy of that namespace, and a cluster
// policy only where whoever wrote the policy allows it with this
// annotation. A waiver naming any other policy is not applied (a Warning
// event with reason WaiverNotAllowed names it).
const WaivableAnnotation = "magos.dev/waivable"
