package project

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
	"github.com/magos-dev/magos/controllers/internal/rerror"
)

func TestResolveSpec(t *testing.T) {
	interval := &metav1.Duration{Duration: 10 * time.Minute}
	tests := []struct {
		name    string
		spec    magosv1.ProjectSpec
		want    *resolved
		wantErr []string
	}{
		{name: "empty spec resolves to nothing", spec: magosv1.ProjectSpec{}, want: &resolved{}},
		{
			name: "everything is copied",
			spec: magosv1.ProjectSpec{
				VariableSetRefs: []magosv1.LocalObjectReference{{Name: "b"}, {Name: "a"}},
				Defaults: &magosv1.ProjectDefaults{Terraform: &magosv1.TerraformSpec{Engine: magosv1.EngineOpenTofu, Version: "1.10.6"},
					Interval: interval, Approval: magosv1.ApprovalManual},
				Policy:                           &magosv1.PolicySpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "prod"}}},
				SourceAllowList:                  []magosv1.SourceRule{{Kind: "GitRepository", Namespace: "flux-*", Name: "*"}},
				AllowedServiceAccountAnnotations: []string{"eks.amazonaws.com/role-arn"},
			},
			want: &resolved{
				VariableSetRefs: []magosv1.LocalObjectReference{{Name: "b"}, {Name: "a"}},
				Defaults: &magosv1.ProjectDefaults{Terraform: &magosv1.TerraformSpec{Engine: magosv1.EngineOpenTofu, Version: "1.10.6"},
					Interval: interval, Approval: magosv1.ApprovalManual},
				PolicySelector:                   &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "prod"}},
				SourceAllowList:                  []magosv1.SourceRule{{Kind: "GitRepository", Namespace: "flux-*", Name: "*"}},
				AllowedServiceAccountAnnotations: []string{"eks.amazonaws.com/role-arn"},
			},
		},
		{
			name: "a policy without a selector resolves to no selector",
			spec: magosv1.ProjectSpec{Policy: &magosv1.PolicySpec{}},
			want: &resolved{},
		},
		{
			name: "an invalid selector and bad globs are named",
			spec: magosv1.ProjectSpec{
				Policy: &magosv1.PolicySpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "tier", Operator: metav1.LabelSelectorOpIn}}}},
				SourceAllowList: []magosv1.SourceRule{{Namespace: "ok"}, {Namespace: "[", Name: "a["}},
			},
			wantErr: []string{
				`spec.policy.selector: values: Invalid value: `,
				`for 'in', 'notin' operators, values set can't be empty; `,
				`; spec.sourceAllowList[1].namespace: "[" is not a valid glob: syntax error in pattern; ` +
					`spec.sourceAllowList[1].name: "a[" is not a valid glob: syntax error in pattern`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec.DeepCopy()
			got, err := resolveSpec(spec)
			if tt.wantErr != nil {
				require.Error(t, err)
				for _, part := range tt.wantErr {
					assert.Contains(t, err.Error(), part)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			if spec.Defaults != nil {
				spec.Defaults.Approval = magosv1.ApprovalAuto
				assert.Equal(t, tt.want.Defaults, got.Defaults, "resolved defaults are a copy")
			}
		})
	}
}

func workspace(phase magosv1.WorkspacePhase, ready, drifted, running bool) magosv1.Workspace {
	ws := magosv1.Workspace{Spec: magosv1.WorkspaceSpec{ProjectRef: &magosv1.LocalObjectReference{Name: "p"}}}
	ws.Status.Phase = phase
	status := func(b bool) metav1.ConditionStatus {
		if b {
			return metav1.ConditionTrue
		}
		return metav1.ConditionFalse
	}
	conditions.Set(&ws, magosv1.ReadyCondition, status(ready), "R", "")
	if drifted {
		conditions.Set(&ws, magosv1.DriftedCondition, metav1.ConditionTrue, "DriftDetected", "")
	}
	if running {
		ws.Status.CurrentRun = &magosv1.RunStatus{Job: "j", Phase: "plan"}
	}
	return ws
}

func TestRollup(t *testing.T) {
	tests := []struct {
		name    string
		members []magosv1.Workspace
		want    magosv1.WorkspaceRollup
	}{
		{name: "no members", want: magosv1.WorkspaceRollup{}},
		{
			name: "each state is counted; a Workspace may count twice",
			members: []magosv1.Workspace{
				workspace(magosv1.PhaseIdle, true, false, false),
				workspace(magosv1.PhaseIdle, true, true, false),
				workspace(magosv1.PhaseFailed, false, false, false),
				workspace(magosv1.PhaseAwaitingApproval, false, false, false),
				workspace(magosv1.PhasePlanning, false, true, true),
				{}, // never reconciled: counted in total only
			},
			want: magosv1.WorkspaceRollup{Total: 6, Ready: 2, Failed: 1, Drifted: 2, AwaitingApproval: 1, Running: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, rollup(tt.members))
		})
	}
}

func TestVariableSetStateOf(t *testing.T) {
	ready := &magosv1.VariableSet{}
	conditions.Set(ready, magosv1.ReadyCondition, metav1.ConditionTrue, "Succeeded", "ok")
	waiting := &magosv1.VariableSet{}
	conditions.Set(waiting, magosv1.ReadyCondition, metav1.ConditionFalse, "ReferenceNotFound", "Waiting for Secret s not found")

	assert.Equal(t, variableSetState{Name: "x"}, variableSetStateOf("x", nil))
	assert.Equal(t, variableSetState{Name: "x", Found: true, Ready: true}, variableSetStateOf("x", ready))
	assert.Equal(t, variableSetState{Name: "x", Found: true, Message: "Waiting for Secret s not found"}, variableSetStateOf("x", waiting))
	assert.Equal(t, variableSetState{Name: "x", Found: true}, variableSetStateOf("x", &magosv1.VariableSet{}))
}

func TestComputeStatus(t *testing.T) {
	res := &resolved{
		VariableSetRefs: []magosv1.LocalObjectReference{{Name: "shared"}},
		PolicySelector:  &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
		SourceAllowList: []magosv1.SourceRule{{Name: "*"}},
	}
	counts := &magosv1.WorkspaceRollup{Total: 3, Ready: 2}
	type want struct {
		ready, reconciling, stalled, setsReady metav1.ConditionStatus // "" = absent
		reason                                 string
		setsMessage                            string
		observedGenerationUpdated              bool
		resolvedUpdated                        bool
		rollup                                 magosv1.WorkspaceRollup
	}
	tests := []struct {
		name string
		obs  observation
		want want
	}{
		{name: "an empty Project is Ready",
			obs:  observation{Rollup: &magosv1.WorkspaceRollup{}, VariableSetsObserved: true, Resolved: &resolved{}},
			want: want{ready: "True", reason: magosv1.ReconciliationSucceededReason, observedGenerationUpdated: true}},
		{name: "resolved is Ready with the roll-up",
			obs: observation{Rollup: counts, VariableSetsObserved: true, Resolved: res,
				VariableSets: []variableSetState{{Name: "shared", Found: true, Ready: true}}},
			want: want{ready: "True", setsReady: "True", reason: magosv1.ReconciliationSucceededReason, setsMessage: "All 1 shared VariableSets are Ready",
				observedGenerationUpdated: true, resolvedUpdated: true, rollup: *counts}},
		{name: "a missing or waiting VariableSet leaves the Project Ready and is named",
			obs: observation{Rollup: counts, VariableSetsObserved: true, Resolved: res,
				VariableSets: []variableSetState{{Name: "gone"}, {Name: "waiting", Found: true, Message: "Waiting for Secret s not found"}, {Name: "new", Found: true}}},
			want: want{ready: "True", setsReady: "False", reason: magosv1.ReconciliationSucceededReason,
				setsMessage:               "VariableSet gone not found; VariableSet waiting is not Ready: Waiting for Secret s not found; VariableSet new is not Ready",
				observedGenerationUpdated: true, resolvedUpdated: true, rollup: *counts}},
		{name: "an invalid spec stalls, keeps the last resolution, still rolls up",
			obs:  observation{Rollup: counts, VariableSetsObserved: true, Err: rerror.Stall(magosv1.InvalidSpecReason, errors.New("bad glob"))},
			want: want{ready: "False", stalled: "True", reason: magosv1.InvalidSpecReason, rollup: *counts, observedGenerationUpdated: true}},
		{name: "a list error retries",
			obs: observation{Err: rerror.Retry(magosv1.ReasonListFailed, errors.New("listing member Workspaces: timeout"))},
			want: want{ready: "False", reconciling: "True", reason: magosv1.ReasonListFailed, setsReady: "False", setsMessage: "old", rollup: magosv1.WorkspaceRollup{Total: 9},
				observedGenerationUpdated: true}},
		{name: "nothing observed (deleting) leaves status alone",
			obs:  observation{},
			want: want{ready: "True", reason: "Old", setsReady: "False", setsMessage: "old", rollup: magosv1.WorkspaceRollup{Total: 9}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &magosv1.Project{ObjectMeta: metav1.ObjectMeta{Generation: 2}}
			p.Status.ObservedGeneration = 1
			p.Status.Workspaces = magosv1.WorkspaceRollup{Total: 9}
			p.Status.SourceAllowList = []magosv1.SourceRule{{Name: "old"}}
			conditions.Set(p, magosv1.ReadyCondition, metav1.ConditionTrue, "Old", "old")
			conditions.Set(p, VariableSetsReadyCondition, metav1.ConditionFalse, magosv1.ReasonVariableSetNotReady, "old")
			computeStatus(p, tt.obs)

			status := func(ct string) metav1.ConditionStatus {
				if c := conditions.Get(p, ct); c != nil {
					return c.Status
				}
				return ""
			}
			assert.Equal(t, tt.want.ready, status(magosv1.ReadyCondition), "Ready")
			assert.Equal(t, tt.want.reconciling, status(magosv1.ReconcilingCondition), "Reconciling")
			assert.Equal(t, tt.want.stalled, status(magosv1.StalledCondition), "Stalled")
			assert.Equal(t, tt.want.setsReady, status(VariableSetsReadyCondition), "VariableSetsReady")
			assert.Equal(t, tt.want.reason, conditions.Get(p, magosv1.ReadyCondition).Reason)
			if c := conditions.Get(p, VariableSetsReadyCondition); c != nil {
				assert.Equal(t, tt.want.setsMessage, c.Message)
			}
			assert.Equal(t, tt.want.rollup, p.Status.Workspaces)
			if tt.want.observedGenerationUpdated {
				assert.Equal(t, int64(2), p.Status.ObservedGeneration)
			} else {
				assert.Equal(t, int64(1), p.Status.ObservedGeneration)
			}
			if tt.want.resolvedUpdated {
				assert.Equal(t, res.SourceAllowList, p.Status.SourceAllowList)
				assert.Equal(t, res.PolicySelector, p.Status.PolicySelector)
				assert.Equal(t, res.VariableSetRefs, p.Status.VariableSetRefs)
			} else if tt.obs.Resolved == nil {
				assert.Equal(t, []magosv1.SourceRule{{Name: "old"}}, p.Status.SourceAllowList, "the last resolution is kept")
			}
		})
	}
}
