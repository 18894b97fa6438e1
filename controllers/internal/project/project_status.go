package project

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// VariableSetsReadyCondition is True when every VariableSet in
// spec.variableSetRefs exists and is Ready ("normal-true"). It is absent
// when the Project references none. When False the Project stays Ready:
// its settings are resolved, and the workspace-controller waits on the
// VariableSet itself.
const VariableSetsReadyCondition = "VariableSetsReady"

// maxListedVariableSets bounds how many VariableSets a message names.
const maxListedVariableSets = 5

// resolved is what member Workspaces inherit from a Project.
type resolved struct {
	VariableSetRefs                  []magosv1.LocalObjectReference
	Defaults                         *magosv1.ProjectDefaults
	PolicySelector                   *metav1.LabelSelector
	SourceAllowList                  []magosv1.SourceRule
	AllowedServiceAccountAnnotations []string
	// AllowedServiceAccountAnnotationValues restrict keys to listed values.
	AllowedServiceAccountAnnotationValues []magosv1.AnnotationRule
	// ForbiddenRunnerOverrides are runner fields members may not set.
	ForbiddenRunnerOverrides []magosv1.RunnerField
}

// resolveSpec checks what admission cannot (the policy selector's
// operators and values, the allow-list's globs) and returns what members
// inherit. An error stalls the Project: only a spec change can fix it.
func resolveSpec(spec *magosv1.ProjectSpec) (*resolved, error) {
	var errs []string
	r := &resolved{
		VariableSetRefs:                  append([]magosv1.LocalObjectReference(nil), spec.VariableSetRefs...),
		Defaults:                         spec.Defaults.DeepCopy(),
		AllowedServiceAccountAnnotations: append([]string(nil), spec.AllowedServiceAccountAnnotations...),
		ForbiddenRunnerOverrides:         append([]magosv1.RunnerField(nil), spec.ForbiddenRunnerOverrides...),
	}
	if spec.Policy != nil && spec.Policy.Selector != nil {
		if _, err := metav1.LabelSelectorAsSelector(spec.Policy.Selector); err != nil {
			errs = append(errs, fmt.Sprintf("spec.policy.selector: %v", err))
		}
		r.PolicySelector = spec.Policy.Selector.DeepCopy()
	}
	for i, rule := range spec.SourceAllowList {
		for _, f := range []struct{ field, glob string }{{"namespace", rule.Namespace}, {"name", rule.Name}} {
			if _, err := path.Match(f.glob, ""); err != nil {
				errs = append(errs, fmt.Sprintf("spec.sourceAllowList[%d].%s: %q is not a valid glob: %v", i, f.field, f.glob, err))
			}
		}
	}
	for i, rule := range spec.AllowedServiceAccountAnnotationValues {
		for j, glob := range rule.Values {
			if _, err := path.Match(glob, ""); err != nil {
				errs = append(errs, fmt.Sprintf("spec.allowedServiceAccountAnnotationValues[%d].values[%d]: %q is not a valid glob: %v", i, j, glob, err))
			}
		}
	}
	for _, rule := range spec.AllowedServiceAccountAnnotationValues {
		r.AllowedServiceAccountAnnotationValues = append(r.AllowedServiceAccountAnnotationValues, *rule.DeepCopy())
	}
	if len(spec.SourceAllowList) > 0 {
		r.SourceAllowList = append([]magosv1.SourceRule(nil), spec.SourceAllowList...)
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	return r, nil
}

// rollup counts member Workspaces by state. A Workspace may count in
// several states (e.g. Ready and Drifted).
func rollup(members []magosv1.Workspace) magosv1.WorkspaceRollup {
	var r magosv1.WorkspaceRollup
	for i := range members {
		s := memberStateOf(&members[i])
		r.Total++
		r.Ready += b2i(s.Ready)
		r.Failed += b2i(s.Failed)
		r.Drifted += b2i(s.Drifted)
		r.AwaitingApproval += b2i(s.AwaitingApproval)
		r.AwaitingPromotion += b2i(s.AwaitingPromotion)
		r.Running += b2i(s.Running)
	}
	return r
}

// memberState is what of a Workspace the roll-up counts; the Workspace
// watch passes an update only when it changes.
type memberState struct {
	Project                                                              string
	Ready, Failed, Drifted, AwaitingApproval, AwaitingPromotion, Running bool
}

func memberStateOf(ws *magosv1.Workspace) memberState {
	s := memberState{
		Ready:             meta.IsStatusConditionTrue(ws.Status.Conditions, magosv1.ReadyCondition),
		Failed:            ws.Status.Phase == magosv1.PhaseFailed,
		Drifted:           meta.IsStatusConditionTrue(ws.Status.Conditions, magosv1.DriftedCondition),
		AwaitingApproval:  ws.Status.Phase == magosv1.PhaseAwaitingApproval,
		AwaitingPromotion: ws.Status.Phase == magosv1.PhaseAwaitingPromotion,
		Running:           ws.Status.CurrentRun != nil,
	}
	if ws.Spec.ProjectRef != nil {
		s.Project = ws.Spec.ProjectRef.Name
	}
	return s
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// variableSetState is what the Project knows of one referenced VariableSet.
type variableSetState struct {
	Name  string
	Found bool
	Ready bool
	// Message is the VariableSet's Ready message when it is not Ready.
	Message string
}

// variableSetStateOf reads the state of a VariableSet, nil when missing.
func variableSetStateOf(name string, vs *magosv1.VariableSet) variableSetState {
	if vs == nil {
		return variableSetState{Name: name}
	}
	s := variableSetState{Name: name, Found: true}
	c := meta.FindStatusCondition(vs.Status.Conditions, magosv1.ReadyCondition)
	s.Ready = c != nil && c.Status == metav1.ConditionTrue
	if !s.Ready && c != nil {
		s.Message = c.Message
	}
	return s
}

// observation is what one reconcile of a Project saw.
type observation struct {
	// Rollup counts member Workspaces, when they were listed.
	Rollup *magosv1.WorkspaceRollup
	// VariableSets are the referenced VariableSets in spec order, when they
	// were looked up.
	VariableSets []variableSetState
	// VariableSetsObserved is true when VariableSets were looked up.
	VariableSetsObserved bool
	// Resolved is set when the spec was resolved.
	Resolved *resolved
	// Err is the reconcile error, if any.
	Err error
}

// computeStatus sets the resolved fields, roll-up, conditions and
// observedGeneration of p from the observation. It is pure.
//
//   - Resolved: Ready=True (reason Succeeded), even when a shared VariableSet
//     is missing or not Ready (VariableSetsReady=False says which).
//   - Invalid spec (a stalling error): Stalled=True, Ready=False
//     (InvalidSpec); the resolved fields keep the last valid generation's
//     values (members use them only while Ready is True).
//   - Other errors: Reconciling=True (ProgressingWithRetry), Ready=False.
//
// The roll-up and VariableSetsReady are written whenever they were
// observed, whatever the outcome. observedGeneration moves whenever the
// conditions were computed, errors included: kstatus reads a stale
// observedGeneration as InProgress, which would hide Stalled.
func computeStatus(p *magosv1.Project, o observation) {
	st := &p.Status
	if o.Rollup != nil {
		st.Workspaces = *o.Rollup
	}
	if o.VariableSetsObserved {
		setVariableSetsReady(p, o.VariableSets)
	}
	if o.Err != nil {
		conditions.MarkError(p, o.Err)
		st.ObservedGeneration = p.Generation
		return
	}
	r := o.Resolved
	if r == nil {
		// Nothing was resolved (the Project is being deleted).
		return
	}
	st.VariableSetRefs = r.VariableSetRefs
	st.Defaults = r.Defaults
	st.PolicySelector = r.PolicySelector
	st.SourceAllowList = r.SourceAllowList
	st.AllowedServiceAccountAnnotations = r.AllowedServiceAccountAnnotations
	st.AllowedServiceAccountAnnotationValues = r.AllowedServiceAccountAnnotationValues
	st.ForbiddenRunnerOverrides = r.ForbiddenRunnerOverrides
	conditions.MarkReady(p, metav1.ConditionTrue, magosv1.ReconciliationSucceededReason, "Resolved for member Workspaces")
	st.ObservedGeneration = p.Generation
}

// setVariableSetsReady sets or removes VariableSetsReady.
func setVariableSetsReady(p *magosv1.Project, sets []variableSetState) {
	if len(sets) == 0 {
		conditions.Delete(p, VariableSetsReadyCondition)
		return
	}
	var problems []string
	for _, s := range sets {
		switch {
		case !s.Found:
			problems = append(problems, fmt.Sprintf("VariableSet %s not found", s.Name))
		case !s.Ready && s.Message != "":
			problems = append(problems, fmt.Sprintf("VariableSet %s is not Ready: %s", s.Name, s.Message))
		case !s.Ready:
			problems = append(problems, fmt.Sprintf("VariableSet %s is not Ready", s.Name))
		}
	}
	if len(problems) == 0 {
		conditions.Set(p, VariableSetsReadyCondition, metav1.ConditionTrue, magosv1.ReasonVariableSetsReady,
			fmt.Sprintf("All %d shared VariableSets are Ready", len(sets)))
		return
	}
	shown := problems[:min(len(problems), maxListedVariableSets)]
	msg := strings.Join(shown, "; ")
	if more := len(problems) - len(shown); more > 0 {
		msg += fmt.Sprintf("; and %d more", more)
	}
	conditions.Set(p, VariableSetsReadyCondition, metav1.ConditionFalse, magosv1.ReasonVariableSetNotReady, msg)
}
