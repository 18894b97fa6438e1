package v1alpha1

// WorkspaceMode says what a Workspace's next apply does. It is a persistent
// setting, not a one-off request: a Workspace in Destroy mode keeps planning
// destroys, so a drift plan after the destroy finds nothing to do instead of
// recreating what was destroyed, and a PlanOnly Workspace never applies
// whatever its plans say. Switching back to Apply plans normally again.
// +kubebuilder:validation:Enum=Apply;PlanOnly;Destroy
type WorkspaceMode string

// Workspace modes.
const (
	// ModeApply (the default): plans are applied once the policy gate,
	// the Rollout and approval let them.
	ModeApply WorkspaceMode = "Apply"
	// ModePlanOnly: plans on every revision, input change, drift interval
	// and reconcile request, evaluates the policy gate on each plan and
	// reports it, and never applies (for drift detection and review).
	ModePlanOnly WorkspaceMode = "PlanOnly"
	// ModeDestroy: plans a destroy of everything in the state (a plan in
	// PlanModeDestroy), checked by the policy gate and approved like any
	// plan, and applies exactly that plan.
	ModeDestroy WorkspaceMode = "Destroy"
)

// PlanRequest asks for one plan with -target and -replace addresses. It is
// handled once: the next plan the Workspace makes after ID changes uses the
// addresses (status.plan.request), and status.lastHandledPlanRequest records
// ID once that plan is made. Plans after it (a new revision, inputs, drift)
// are full plans again, whether or not the targeted plan was applied.
// +kubebuilder:validation:XValidation:rule="has(self.targets) || has(self.replace)",message="a plan request names targets or replace addresses"
type PlanRequest struct {
	// ID identifies the request; set a new one to ask again, e.g. a
	// timestamp.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	ID string `json:"id"`

	// Targets are resource or module addresses the plan is limited to
	// (-target), e.g. terraform_data.web or module.db.
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:items:Pattern=`^((module\.[A-Za-z_][A-Za-z0-9_-]*(\[([0-9]+|"[^"]*")\])?\.)*(data\.)?[A-Za-z_][A-Za-z0-9_-]*\.[A-Za-z_][A-Za-z0-9_-]*(\[([0-9]+|"[^"]*")\])?|module\.[A-Za-z_][A-Za-z0-9_-]*(\[([0-9]+|"[^"]*")\])?(\.module\.[A-Za-z_][A-Za-z0-9_-]*(\[([0-9]+|"[^"]*")\])?)*)$`
	// +optional
	Targets []string `json:"targets,omitempty"`

	// Replace are resource instance addresses the plan replaces even if
	// unchanged (-replace), e.g. terraform_data.web or aws_instance.web[0].
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(a, !a.matches('(^|[.])(module|data)[.][^.]+$'))",message="replace addresses name resource instances, not modules or data sources"
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:items:Pattern=`^(module\.[A-Za-z_][A-Za-z0-9_-]*(\[([0-9]+|"[^"]*")\])?\.)*[A-Za-z_][A-Za-z0-9_-]*\.[A-Za-z_][A-Za-z0-9_-]*(\[([0-9]+|"[^"]*")\])?$`
	// +optional
	Replace []string `json:"replace,omitempty"`
}

// Scoped says whether the request limits or changes the plan.
func (in *PlanRequest) Scoped() bool {
	return in != nil && (len(in.Targets) > 0 || len(in.Replace) > 0)
}
