package approvalrules

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	magosv1 "github.com/magos-dev/magos/apis/magos/v1alpha1"
	"github.com/magos-dev/magos/apis/plansummary"
)

func TestGovern(t *testing.T) {
	rules, err := Compile([]magosv1.ApprovalRule{
		{Name: "additions", When: "plan.destroy == 0 && plan.change == 0", AutoApprove: true},
		{Name: "prod-deletes", When: "plan.destroy > 0 && workspace.labels['env'] == 'prod'", Approvals: ptr.To(int32(2)), Groups: []string{"platform-admins"}},
		{Name: "drift", When: "plan.drift"},
		{Name: "rest"},
	}, "spec.approvalRules")
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		plan Plan
		want string
	}{
		{"add only", Plan{Add: 3}, "additions"},
		{"a delete in prod", Plan{Add: 1, Destroy: 1, Labels: map[string]string{"env": "prod"}}, "prod-deletes"},
		{"a drift re-plan with changes", Plan{Change: 1, Drift: true}, "drift"},
		{"anything else", Plan{Change: 1, Labels: map[string]string{"env": "dev"}}, "rest"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rules.Govern(tt.plan)
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, tt.want, got.Name)
		})
	}

	none, err := Compile([]magosv1.ApprovalRule{{Name: "deletes", When: "plan.destroy > 0"}}, "spec.approvalRules")
	require.NoError(t, err)
	got, err := none.Govern(Plan{Add: 1})
	require.NoError(t, err)
	assert.Nil(t, got, "no rule governs")
}

func TestCompileAndEvaluationErrorsNameTheRule(t *testing.T) {
	_, err := Compile([]magosv1.ApprovalRule{{Name: "ok", When: "true"}, {Name: "broken", When: "plan.destroy >"}}, "spec.approvalRules")
	require.ErrorContains(t, err, "spec.approvalRules[1] (broken).when: ")
	_, err = Compile([]magosv1.ApprovalRule{{Name: "count", When: "plan.add + 1"}}, "the Project's defaults.approvalRules")
	require.ErrorContains(t, err, "the Project's defaults.approvalRules[0] (count).when: is of type int, not bool")

	rules, err := Compile([]magosv1.ApprovalRule{{Name: "labels", When: "workspace.labels['team'] == 'a'"}}, "spec.approvalRules")
	require.NoError(t, err)
	_, err = rules.Govern(Plan{})
	require.ErrorContains(t, err, "spec.approvalRules[0] (labels).when: ")
}

// TestGovernOverResources: a rule may read the resources the plan changes
// (plan.resources: address, module, mode, type, name, actions); no-op and
// read entries are not among them.
func TestGovernOverResources(t *testing.T) {
	rules, err := Compile([]magosv1.ApprovalRule{
		{Name: "iam", When: "plan.resources.exists(r, r.type.startsWith('aws_iam_'))", Approvals: ptr.To(int32(2))},
		{Name: "replacements", When: "plan.resources.exists(r, 'delete' in r.actions && 'create' in r.actions)"},
		{Name: "network-module", When: "plan.resources.exists(r, r.module == 'module.network')"},
		{Name: "rest"},
	}, "spec.approvalRules")
	require.NoError(t, err)
	assert.True(t, rules.ReadsResources())
	change := func(address, typ, module string, actions ...string) plansummary.ResourceChange {
		rc := plansummary.ResourceChange{Address: address, Type: typ, ModuleAddress: module, Mode: "managed"}
		rc.Change.Actions = actions
		return rc
	}
	for _, tt := range []struct {
		name      string
		resources []plansummary.ResourceChange
		want      string
	}{
		{"an IAM role changes", []plansummary.ResourceChange{change("aws_iam_role.ci", "aws_iam_role", "", "update")}, "iam"},
		{"an IAM role is untouched", []plansummary.ResourceChange{change("aws_iam_role.ci", "aws_iam_role", "", "no-op"), change("aws_s3_bucket.b", "aws_s3_bucket", "", "create")}, "rest"},
		{"a replacement", []plansummary.ResourceChange{change("aws_instance.a", "aws_instance", "", "delete", "create")}, "replacements"},
		{"a change in a module", []plansummary.ResourceChange{change("module.network.aws_vpc.v", "aws_vpc", "module.network", "update")}, "network-module"},
		{"no resources", nil, "rest"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rules.Govern(Plan{Resources: tt.resources})
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, tt.want, got.Name)
		})
	}
	counts, err := Compile([]magosv1.ApprovalRule{{Name: "adds", When: "plan.destroy == 0"}}, "spec.approvalRules")
	require.NoError(t, err)
	assert.False(t, counts.ReadsResources(), "rules over the counts need no plan JSON")
}
