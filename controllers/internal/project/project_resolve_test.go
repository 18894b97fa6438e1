package project

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/controllers/internal/conditions"
)

// TestProjectResolves: defaults, policy selector, source allow-list, shared
// VariableSets, allowed annotations and forbidden runner overrides land in
// status for the workspace-controller, and the Project is Ready.
func TestProjectResolves(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	startController(t, ns)

	createProject(t, ns, "platform", magosv1.ProjectSpec{
		VariableSetRefs: []magosv1.LocalObjectReference{{Name: "common"}},
		Defaults: &magosv1.ProjectDefaults{
			Terraform: &magosv1.TerraformSpec{Engine: magosv1.EngineOpenTofu, Version: "1.10.6"},
			Runner: &magosv1.RunnerSpec{ServiceAccountAnnotations: map[string]string{"eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/x"},
				CLIConfig: &magosv1.CLIConfigSpec{SecretName: "mirror"}, PodLabels: map[string]string{"team": "infra"}},
			Interval: &metav1.Duration{Duration: 30 * time.Minute},
			Approval: magosv1.ApprovalManual,
		},
		Policy: &magosv1.PolicySpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "magos.dev/policy-tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod", "all"}}}}},
		SourceAllowList:                  []magosv1.SourceRule{{Kind: "GitRepository", Namespace: "flux-system", Name: "infra-*"}},
		AllowedServiceAccountAnnotations: []string{"eks.amazonaws.com/role-arn"},
		ForbiddenRunnerOverrides:         []magosv1.RunnerField{"cliConfig", "image"},
	})
	require.NoError(t, env.Client.Create(context.Background(), &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "common"}}))
	// The Project may first be reconciled before the VariableSet exists
	// ("not found"); wait for the reconcile that saw it.
	p := eventually(t, ns, "platform", func(p *magosv1.Project) bool {
		sets := conditions.Get(p, VariableSetsReadyCondition)
		return conditions.IsTrue(p, magosv1.ReadyCondition) && sets != nil && sets.Message == "VariableSet common is not Ready"
	}, "Project platform is not Ready with VariableSet common seen but not Ready")

	st := p.Status
	assert.Equal(t, magosv1.ReconciliationSucceededReason, conditions.Get(p, magosv1.ReadyCondition).Reason)
	assert.Equal(t, p.Spec.VariableSetRefs, st.VariableSetRefs)
	assert.Equal(t, p.Spec.Defaults, st.Defaults)
	assert.Equal(t, p.Spec.Policy.Selector, st.PolicySelector)
	assert.Equal(t, p.Spec.SourceAllowList, st.SourceAllowList)
	assert.Equal(t, []string{"eks.amazonaws.com/role-arn"}, st.AllowedServiceAccountAnnotations)
	assert.Equal(t, []magosv1.RunnerField{"cliConfig", "image"}, st.ForbiddenRunnerOverrides)
	assert.Equal(t, magosv1.DefaultCLIConfigKey, st.Defaults.Runner.CLIConfig.Key, "the CLI configuration key defaults at admission")
	assert.Equal(t, magosv1.WorkspaceRollup{}, st.Workspaces)

	// Nothing reconciles the VariableSet here, so it is not Ready yet; the
	// Project stays Ready and says so in VariableSetsReady.
	sets := conditions.Get(p, VariableSetsReadyCondition)
	require.NotNil(t, sets)
	assert.Equal(t, metav1.ConditionFalse, sets.Status)
	assert.Equal(t, "VariableSet common is not Ready", sets.Message)

	vs := &magosv1.VariableSet{}
	require.NoError(t, env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "common"}, vs))
	conditions.MarkReady(vs, metav1.ConditionTrue, magosv1.ReconciliationSucceededReason, "Rendered")
	require.NoError(t, env.Client.Status().Update(context.Background(), vs))
	eventually(t, ns, "platform", conditionIs(VariableSetsReadyCondition, metav1.ConditionTrue),
		"VariableSetsReady did not follow the VariableSet becoming Ready")
}

// TestEmptyProject: a Project with an empty spec is Ready, with an empty
// allow-list (sources in its own namespace only) and no VariableSetsReady.
func TestEmptyProject(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	startController(t, ns)
	createProject(t, ns, "empty", magosv1.ProjectSpec{})
	p := eventually(t, ns, "empty", conditionIs(magosv1.ReadyCondition, metav1.ConditionTrue), "Project empty is not Ready")
	assert.Equal(t, magosv1.ReconciliationSucceededReason, conditions.Get(p, magosv1.ReadyCondition).Reason)
	assert.Nil(t, conditions.Get(p, VariableSetsReadyCondition))
	assert.Nil(t, conditions.Get(p, magosv1.ReconcilingCondition))
	assert.Empty(t, p.Status.SourceAllowList)
}

// TestMissingVariableSet: a shared VariableSet that does not exist is named
// in VariableSetsReady; the Project stays Ready, and recovers when the
// VariableSet appears.
func TestMissingVariableSet(t *testing.T) {
	env.Require(t)
	ns := env.NewNamespace(t)
	startController(t, ns)
	createProject(t, ns, "p", magosv1.ProjectSpec{VariableSetRefs: []magosv1.LocalObjectReference{{Name: "later"}}})
	p := eventually(t, ns, "p", conditionIs(VariableSetsReadyCondition, metav1.ConditionFalse), "VariableSetsReady is not False")
	assert.True(t, conditions.IsTrue(p, magosv1.ReadyCondition), "the Project stays Ready")
	assert.Equal(t, "VariableSet later not found", conditions.Get(p, VariableSetsReadyCondition).Message)

	vs := &magosv1.VariableSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "later"}}
	require.NoError(t, env.Client.Create(context.Background(), vs))
	conditions.MarkReady(vs, metav1.ConditionTrue, magosv1.ReconciliationSucceededReason, "Rendered")
	require.NoError(t, env.Client.Status().Update(context.Background(), vs))
	eventually(t, ns, "p", conditionIs(VariableSetsReadyCondition, metav1.ConditionTrue), "the new VariableSet was not seen")

	require.Eventually(t, func() bool {
		var evs eventsv1.EventList
		if err := env.Client.List(context.Background(), &evs, client.InNamespace(ns)); err != nil {
			return false
		}
		var warned, recovered bool
		for _, e := range evs.Items {
			warned = warned || (e.Type == corev1.EventTypeWarning && e.Reason == magosv1.ReasonVariableSetNotReady && e.Note == "VariableSet later not found")
			recovered = recovered || (e.Type == corev1.EventTypeNormal && e.Reason == magosv1.ReasonVariableSetsReady)
		}
		return warned && recovered
	}, 10*time.Second, 100*time.Millisecond, "VariableSetsReady transitions were not recorded as events")
}

// TestInvalidProjectStalls: a glob the allow-list cannot use stalls the
// Project with InvalidSpec until the spec is fixed.
func TestInvalidProjectStalls(t *testing.T) {
	env.Require(t)
	ctx := context.Background()
	ns := env.NewNamespace(t)
	startController(t, ns)
	createProject(t, ns, "bad", magosv1.ProjectSpec{SourceAllowList: []magosv1.SourceRule{{Name: "infra-["}}})

	p := &magosv1.Project{}
	require.Eventually(t, func() bool {
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bad"}, p) == nil &&
			conditions.IsTrue(p, magosv1.StalledCondition)
	}, 30*time.Second, 100*time.Millisecond, "Project bad did not stall")
	ready := conditions.Get(p, magosv1.ReadyCondition)
	assert.Equal(t, magosv1.InvalidSpecReason, ready.Reason)
	assert.Contains(t, ready.Message, `spec.sourceAllowList[0].name: "infra-[" is not a valid glob`)
	assert.Equal(t, p.Generation, p.Status.ObservedGeneration, "a stalled Project records the generation it stalled on, so kstatus reads it as Failed")

	p.Spec.SourceAllowList[0].Name = "infra-*"
	require.NoError(t, env.Client.Update(ctx, p))
	p = eventually(t, ns, "bad", conditionIs(magosv1.ReadyCondition, metav1.ConditionTrue), "fixing the spec did not make the Project Ready")
	assert.Nil(t, conditions.Get(p, magosv1.StalledCondition))
}
