package v1alpha1

// GetObservedGeneration returns status.observedGeneration.
func (in *Workspace) GetObservedGeneration() int64 { return in.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (in *Workspace) SetObservedGeneration(g int64) { in.Status.ObservedGeneration = g }

// GetObservedGeneration returns status.observedGeneration.
func (in *VariableSet) GetObservedGeneration() int64 { return in.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (in *VariableSet) SetObservedGeneration(g int64) { in.Status.ObservedGeneration = g }

// GetObservedGeneration returns status.observedGeneration.
func (in *Project) GetObservedGeneration() int64 { return in.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (in *Project) SetObservedGeneration(g int64) { in.Status.ObservedGeneration = g }

// GetObservedGeneration returns status.observedGeneration.
func (in *Rollout) GetObservedGeneration() int64 { return in.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (in *Rollout) SetObservedGeneration(g int64) { in.Status.ObservedGeneration = g }

// IsSuspended reports whether spec.suspend is set.
func (in *Workspace) IsSuspended() bool { return in.Spec.Suspend }

// IsSuspended reports whether spec.suspend is set.
func (in *Rollout) IsSuspended() bool { return in.Spec.Suspend }

// LastRun is the newest finished run (status.history[0]), or nil.
func (in *WorkspaceStatus) LastRun() *RunStatus {
	if len(in.History) == 0 {
		return nil
	}
	return &in.History[0]
}

// PendingPlan is the plan with changes that is not applied yet, or nil.
func (in *WorkspaceStatus) PendingPlan() *PlanStatus {
	p, a := in.Plan, in.LastApplied
	if p == nil || !p.HasChanges || (a != nil && a.PlanID == p.ID) {
		return nil
	}
	return p
}
